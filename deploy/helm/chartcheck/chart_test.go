package chartcheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/cdc2delta/cdc2delta/config"
)

const chartDir = "../cdc2delta"

// rendered is what one `helm template` produced, by kind; each object decoded
// strictly (an unknown field is an error) into its API type.
type rendered struct {
	configMaps      []corev1.ConfigMap
	secrets         []corev1.Secret
	services        []corev1.Service
	statefulSets    []appsv1.StatefulSet
	serviceMonitors []monitoringv1.ServiceMonitor
}

// helm returns the helm binary CDC2DELTA_HELM names: scripts/setup/helm.sh
// fetch builds it. The chart is the subject of this test, so no helm is a failure.
func helm(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CDC2DELTA_HELM")
	if bin == "" {
		t.Fatal("CDC2DELTA_HELM is not set: run `scripts/setup/helm.sh fetch` and export CDC2DELTA_HELM=<the path it prints>")
	}
	return bin
}

// template runs helm template on the chart with args.
func template(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, helm(t), append([]string{"template", "cdc2delta", chartDir, "--namespace", "data"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, &helmError{err: err, stderr: stderr.String()}
	}
	return out, nil
}

type helmError struct {
	err    error
	stderr string
}

func (e *helmError) Error() string { return "helm template: " + e.err.Error() + ": " + e.stderr }

// decode splits helm's output into documents and decodes each strictly by kind.
func decode(t *testing.T, out []byte) rendered {
	t.Helper()
	var r rendered
	for i, doc := range strings.Split(string(out), "\n---") {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, doc)
		}
		if head.Kind == "" {
			continue // helm's leading comment
		}
		strict := func(into any) {
			if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
				t.Fatalf("document %d (%s %s) does not decode strictly: %v\n%s", i, head.APIVersion, head.Kind, err, doc)
			}
		}
		switch head.APIVersion + " " + head.Kind {
		case "v1 ConfigMap":
			r.configMaps = append(r.configMaps, corev1.ConfigMap{})
			strict(&r.configMaps[len(r.configMaps)-1])
		case "v1 Secret":
			r.secrets = append(r.secrets, corev1.Secret{})
			strict(&r.secrets[len(r.secrets)-1])
		case "v1 Service":
			r.services = append(r.services, corev1.Service{})
			strict(&r.services[len(r.services)-1])
		case "apps/v1 StatefulSet":
			r.statefulSets = append(r.statefulSets, appsv1.StatefulSet{})
			strict(&r.statefulSets[len(r.statefulSets)-1])
		case "monitoring.coreos.com/v1 ServiceMonitor":
			r.serviceMonitors = append(r.serviceMonitors, monitoringv1.ServiceMonitor{})
			strict(&r.serviceMonitors[len(r.serviceMonitors)-1])
		default:
			t.Fatalf("document %d: %s %s has no API type in this test: add it", i, head.APIVersion, head.Kind)
		}
	}
	return r
}

func TestChartRenders(t *testing.T) {
	tests := []struct {
		name            string
		args            []string // of helm template
		secret          string   // the Secret the container reads ("": none)
		serviceMonitors int
		validate        bool // the config is complete: config.Check must pass
	}{
		{name: "defaults"},
		{name: "full", args: []string{"--values", "../full-values.yaml"}, secret: "cdc2delta", serviceMonitors: 1, validate: true},
		{name: "existing secret", args: []string{"--set", "secret.existingSecret=kafka-credentials"}, secret: "kafka-credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := template(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			r := decode(t, out)
			if len(r.statefulSets) != 1 || len(r.configMaps) != 1 || len(r.services) != 1 {
				t.Fatalf("rendered %d StatefulSets, %d ConfigMaps, %d Services; want one each",
					len(r.statefulSets), len(r.configMaps), len(r.services))
			}
			if len(r.serviceMonitors) != tt.serviceMonitors {
				t.Errorf("rendered %d ServiceMonitors, want %d", len(r.serviceMonitors), tt.serviceMonitors)
			}
			wantSecrets := 0
			if tt.secret == "cdc2delta" {
				wantSecrets = 1
			}
			if len(r.secrets) != wantSecrets {
				t.Errorf("rendered %d Secrets, want %d", len(r.secrets), wantSecrets)
			}
			checkPod(t, r.statefulSets[0], r.configMaps[0], tt.secret)
			checkConfig(t, r.configMaps[0], tt.validate)
			if svc := r.services[0]; svc.Spec.ClusterIP != "None" || svc.Name != r.statefulSets[0].Spec.ServiceName {
				t.Errorf("service %s (clusterIP %q) is not the StatefulSet's headless service %q", svc.Name, svc.Spec.ClusterIP, r.statefulSets[0].Spec.ServiceName)
			}
		})
	}
}

// checkPod checks what the chart promises of the pod: static membership ids from
// the pod name, probes on /healthz and /readyz, non-root with a read-only root,
// the config mounted where the args point, and the secret as environment.
func checkPod(t *testing.T, sts appsv1.StatefulSet, cm corev1.ConfigMap, secret string) {
	t.Helper()
	pod := sts.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if got := strings.Join(c.Args, " "); got != "run --config /etc/cdc2delta/cdc2delta.yaml" {
		t.Errorf("args %q", got)
	}
	podName := false
	for _, e := range c.Env {
		if e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			podName = true
		}
	}
	if !podName {
		t.Errorf("no POD_NAME from metadata.name in %v", c.Env)
	}
	var fromSecret string
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil {
			fromSecret = e.SecretRef.Name
		}
	}
	if fromSecret != secret {
		t.Errorf("environment from Secret %q, want %q", fromSecret, secret)
	}
	for name, p := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != name || p.HTTPGet.Port.String() != "metrics" {
			t.Errorf("probe %s: %+v", name, p)
		}
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" {
		t.Errorf("ports %+v, want one named metrics", c.Ports)
	}
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and the image's user 65532", psc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("container securityContext %+v: want readOnlyRootFilesystem", sc)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	if v := volumes[mounts["/etc/cdc2delta"]]; v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Errorf("/etc/cdc2delta is %+v, not ConfigMap %s", v, cm.Name)
	}
	if v := volumes[mounts["/var/lib/cdc2delta"]]; v.EmptyDir == nil {
		t.Errorf("/var/lib/cdc2delta (the key index) is %+v, not an emptyDir", v)
	}
}

// checkConfig parses the rendered cdc2delta.yaml as the product does: the
// instance id is the pod's name and the key index is on the writable volume.
func checkConfig(t *testing.T, cm corev1.ConfigMap, validate bool) {
	t.Helper()
	data := []byte(cm.Data["cdc2delta.yaml"])
	env := func(name string) (string, bool) {
		v, ok := map[string]string{"POD_NAME": "cdc2delta-0", "KAFKA_PASSWORD": "x"}[name]
		return v, ok
	}
	var c config.Config
	var err error
	if validate {
		c, err = config.Check(data, env, nil)
	} else {
		c, err = config.Parse(data, env)
	}
	if err != nil {
		t.Fatalf("cdc2delta.yaml: %v\n%s", err, data)
	}
	if c.Kafka.InstanceID != "cdc2delta-0" {
		t.Errorf("kafka.instance_id reads %q, want the pod name", c.Kafka.InstanceID)
	}
	if !strings.HasPrefix(c.Memory.KeyIndexDir, "/var/lib/cdc2delta/") {
		t.Errorf("memory.key_index_dir %q is not on the writable volume /var/lib/cdc2delta", c.Memory.KeyIndexDir)
	}
	if c.Metrics.Listen != ":9464" {
		t.Errorf("metrics.listen %q, want :9464 (the container's metrics port)", c.Metrics.Listen)
	}
}

// TestChartRejectsBadValues: values.schema.json refuses what the chart cannot render.
func TestChartRejectsBadValues(t *testing.T) {
	for _, set := range []string{"service.port=0", "serviceMonitor.interval=often", "replica=2", "config.kafka.instance_id="} {
		t.Run(set, func(t *testing.T) {
			_, err := template(t, "--set", set)
			if err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
				t.Fatalf("--set %s: %v, want a schema error", set, err)
			}
		})
	}
}
