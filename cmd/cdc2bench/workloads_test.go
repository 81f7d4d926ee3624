package main

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// testPreset is larger than tiny so that op ratios are measurable.
var testPreset = preset{Name: "test", BaseRows: 20_000, Batches: 3, Batch: 4_000, UpsertBatches: [3]int{500, 4_000, 8_000}, Small: 100, SmallBatches: 4}

func workloadNamed(t *testing.T, name string) workload {
	t.Helper()
	ws, err := selectWorkloads(workloads(testPreset), name)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	return ws[0]
}

func TestWorkloadsDeterministic(t *testing.T) {
	for _, w := range workloads(testPreset) {
		t.Run(w.Name, func(t *testing.T) {
			a := newGenerator(7, testPreset.BaseRows).batches(w)
			b := newGenerator(7, testPreset.BaseRows).batches(w)
			require.Equal(t, a, b)
			c := newGenerator(8, testPreset.BaseRows).batches(w)
			require.NotEqual(t, a, c, "another seed must give other batches")
		})
	}
}

// opShares counts the ops of all batches.
func opShares(bs []generatedBatch) (ops map[byte]int, total int) {
	ops = map[byte]int{}
	for _, b := range bs {
		for _, c := range b.Changes {
			ops[c.Op]++
			total++
		}
	}
	return ops, total
}

func TestWorkloadOpMix(t *testing.T) {
	tests := []struct {
		name string
		// share of each op, within tol
		want map[byte]float64
		tol  float64
	}{
		{name: "1", want: map[byte]float64{'c': 0.95, 'u': 0.05}, tol: 0.01},
		{name: "2b", want: map[byte]float64{'c': 0.20, 'u': 0.80}, tol: 0.02},
		{name: "3", want: map[byte]float64{'u': 1}, tol: 0},
		{name: "4", want: map[byte]float64{'d': 1}, tol: 0},
		{name: "6-local", want: map[byte]float64{'c': 0.20, 'u': 0.80}, tol: 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := workloadNamed(t, tt.name)
			g := newGenerator(3, testPreset.BaseRows)
			bs := g.batches(w)
			require.Len(t, bs, w.Batches)
			for _, b := range bs {
				require.Len(t, b.Changes, w.Batch)
			}
			ops, total := opShares(bs)
			for op, share := range tt.want {
				require.InDelta(t, share, float64(ops[op])/float64(total), tt.tol, "share of %q", op)
			}
			for op := range ops {
				require.Contains(t, tt.want, op, "unexpected op %q", op)
			}
		})
	}
}

// TestWorkloadTargets checks what the events hit: every update and delete
// targets a live key, table_rows_before follows the model, and the
// generator's final row count is the model's.
func TestWorkloadTargets(t *testing.T) {
	for _, w := range workloads(testPreset) {
		t.Run(w.Name, func(t *testing.T) {
			g := newGenerator(11, testPreset.BaseRows)
			bs := g.batches(w)
			m := baseModel(11, testPreset.BaseRows)
			for _, b := range bs {
				require.Equal(t, len(m), b.TableRowsBefore)
				live := map[int64]bool{}
				for id := range m {
					live[id] = true
				}
				for _, c := range b.Changes {
					switch c.Op {
					case 'u', 'd':
						require.True(t, live[c.ID], "%c of dead key %d", c.Op, c.ID)
					case 'c':
						require.False(t, live[c.ID], "insert of live key %d", c.ID)
					}
					live[c.ID] = c.Op != 'd'
				}
				applyModel(m, b.Changes)
			}
			require.Equal(t, len(m), g.rows)
		})
	}
}

func TestWorkloadShapes(t *testing.T) {
	t.Run("1 updates only the newest keys", func(t *testing.T) {
		g := newGenerator(5, testPreset.BaseRows)
		for _, b := range g.batches(workloadNamed(t, "1")) {
			for _, c := range b.Changes {
				if c.Op == 'u' {
					require.Greater(t, c.ID, int64(b.TableRowsBefore)*98/100, "update of an old key")
				}
			}
		}
	})
	t.Run("3 is skewed", func(t *testing.T) {
		g := newGenerator(5, testPreset.BaseRows)
		hits := map[int64]int{}
		n := 0
		for _, b := range g.batches(workloadNamed(t, "3")) {
			for _, c := range b.Changes {
				hits[c.ID]++
				n++
			}
		}
		counts := make([]int, 0, len(hits))
		for _, h := range hits {
			counts = append(counts, h)
		}
		slices.Sort(counts)
		slices.Reverse(counts)
		top := 0
		for _, h := range counts[:min(10, len(counts))] {
			top += h
		}
		// Under Zipf(1.1) the ten hottest keys take a large share; a
		// uniform draw over 20k keys would give them about 0.2%.
		require.Greater(t, float64(top)/float64(n), 0.2)
		require.Less(t, len(hits), n/2, "too many distinct keys for a hot set")
	})
	t.Run("4 deletes distinct keys", func(t *testing.T) {
		g := newGenerator(5, testPreset.BaseRows)
		seen := map[int64]bool{}
		for _, b := range g.batches(workloadNamed(t, "4")) {
			for _, c := range b.Changes {
				require.False(t, seen[c.ID], "key %d deleted twice", c.ID)
				seen[c.ID] = true
			}
		}
		require.Equal(t, testPreset.BaseRows-testPreset.Batches*testPreset.Batch, g.rows)
	})
	t.Run("5 has chains inside batches", func(t *testing.T) {
		g := newGenerator(5, testPreset.BaseRows)
		for _, b := range g.batches(workloadNamed(t, "5")) {
			per := map[int64][]byte{}
			for _, c := range b.Changes {
				per[c.ID] = append(per[c.ID], c.Op)
			}
			var newChains, oldChains int
			for _, ops := range per {
				switch {
				case len(ops) >= 2 && ops[0] == 'c':
					newChains++
				case slices.Equal(ops, []byte("uud")):
					oldChains++
				}
			}
			require.Greater(t, newChains, 100)
			require.Greater(t, oldChains, 100)
			require.Less(t, len(per), len(b.Changes)/2, "events per key")
		}
	})
}

func TestSelectWorkloads(t *testing.T) {
	all := workloads(testPreset)
	names := func(ws []workload) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w.Name)
		}
		return out
	}
	tests := []struct {
		list    string
		want    []string
		wantErr bool
	}{
		{list: "", want: []string{"1", "2a", "2b", "2c", "3", "4", "5", "6-local", "6-s3"}},
		{list: "2", want: []string{"2a", "2b", "2c"}},
		{list: "6,1", want: []string{"6-local", "6-s3", "1"}},
		{list: "2b, 6-local,2b", want: []string{"2b", "6-local"}},
		{list: "7", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			got, err := selectWorkloads(all, tt.list)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, names(got))
		})
	}
}

func TestSelectSystems(t *testing.T) {
	got, err := selectSystems("spark-cow,cdc2delta-dv,deltars")
	require.NoError(t, err)
	require.Equal(t, []string{sysDV, sysRS, sysSpCoW}, got)
	_, err = selectSystems("duckdb")
	require.ErrorIs(t, err, errUsage)
}
