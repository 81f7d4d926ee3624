package processor

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
)

// stalls hold partitions back at the processor, as a paused consumer
// would, on kfake and on a real broker alike: a record that Stall selects
// is produced with its value schema's copy made for its partition (the
// same schema, another id), and the registry answers 503 for that id until
// Release. The processor holds the partition, paused, at that record.
type stalls struct {
	reg *registry.Registry
	mu  sync.Mutex
	// stall selects the records to stall, by event and partition.
	stall func(ev dbzgen.Event, part int32) bool
	ids   map[[2]int]int // (schema id, partition) → the copy's id
	// refused maps each refused copy's id to its partition.
	refused map[int]int32
}

// Stall selects the records produced from now on to stall (nil: none).
func (s *stalls) Stall(f func(ev dbzgen.Event, part int32) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall = f
}

// Release lets the processor read the partition's stalled records.
func (s *stalls) Release(part int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, p := range s.refused {
		if p == part {
			delete(s.refused, id)
		}
	}
}

// refuses reports whether the registry must refuse a request's path.
func (s *stalls) refuses(path string) bool {
	id, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path, "/schemas/ids/"), "/schema"))
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.refused[id]
	return ok
}

// mark gives r, when selected, the stalled schema id of the partition the
// producer's partitioner puts it in.
func (s *stalls) mark(t testing.TB, ev dbzgen.Event, r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stall == nil || len(r.Value) < 5 {
		return
	}
	part := int32(kgo.StickyKeyPartitioner(nil).ForTopic(r.Topic).Partition(r, testPartitions))
	if !s.stall(ev, part) {
		return
	}
	orig := int(binary.BigEndian.Uint32(r.Value[1:5]))
	id, ok := s.ids[[2]int{orig, int(part)}]
	if !ok {
		text, err := s.reg.SchemaByID(orig)
		require.NoError(t, err)
		var schema map[string]any
		require.NoError(t, json.Unmarshal([]byte(text), &schema))
		schema["doc"] = fmt.Sprintf("stalled in partition %d", part)
		b, err := json.Marshal(schema)
		require.NoError(t, err)
		sub, err := s.reg.Register(fmt.Sprintf("stall-%d-%d", orig, part), string(b))
		require.NoError(t, err)
		id = sub.ID
		s.ids[[2]int{orig, int(part)}] = id
	}
	s.refused[id] = part
	v := append([]byte(nil), r.Value...)
	binary.BigEndian.PutUint32(v[1:5], uint32(id))
	r.Value = v
}
