package catalog

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type registrarMetrics struct {
	registrations *prometheus.CounterVec // result
	conflicts     prometheus.Gauge
	failing       prometheus.Gauge
}

// newRegistrarMetrics are one catalog's metrics, labelled with its name:
// each catalog of a process has its own series.
func newRegistrarMetrics(reg prometheus.Registerer, name string) (*registrarMetrics, error) {
	lbl := prometheus.Labels{"catalog": name}
	m := &registrarMetrics{
		registrations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "cdc2delta", Subsystem: "catalog", Name: "registrations_total", ConstLabels: lbl,
			Help: "Table registrations in the catalog, by result (created, updated, unchanged, conflict, error)."}, []string{"result"}),
		conflicts: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "cdc2delta", Subsystem: "catalog", Name: "conflicts", ConstLabels: lbl,
			Help: "Tables whose name in the catalog holds another table; their registration waits for an operator."}),
		failing: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "cdc2delta", Subsystem: "catalog", Name: "failing_tables", ConstLabels: lbl,
			Help: "Tables whose registration is failing and being retried (catalog down, hung, or refusing credentials)."}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.registrations, m.conflicts, m.failing} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *registrarMetrics) setConflicts(conflicts, failing int) {
	m.conflicts.Set(float64(conflicts))
	m.failing.Set(float64(failing))
}
