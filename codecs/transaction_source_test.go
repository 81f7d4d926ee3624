package codecs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTransactionKeysBySource reads the transaction topic's events as
// Debezium 3.6.1's PostgreSQL and MariaDB connectors write them (captured
// from the real connectors) and checks the key each gets, or the refusal.
func TestTransactionKeysBySource(t *testing.T) {
	end := func(id string, cols ...any) map[string]any {
		return map[string]any{"status": "END", "id": id, "event_count": int64(len(cols) / 2), "ts_ms": int64(1),
			"data_collections": func() []any {
				var out []any
				for i := 0; i < len(cols); i += 2 {
					out = append(out, map[string]any{"data_collection": cols[i], "event_count": cols[i+1]})
				}
				return out
			}()}
	}
	// PostgreSQL: "<txId>:<LSN at the commit>"; the key is that LSN less
	// one, so the next transaction's changes (last committed LSN 26502552)
	// order above it and this one's (an earlier commit's) below.
	ev, err := txEventFrom(end("739:26502552", "public.a", int64(1), "public.b", int64(1)))
	require.NoError(t, err)
	require.Equal(t, "postgres:739", ev.Name)
	require.Equal(t, taggedUint(tagPostgres, 26502551), ev.Commit)
	require.Equal(t, map[TableID]int64{{Schema: "public", Table: "a"}: 1, {Schema: "public", Table: "b"}: 1}, ev.Counts)
	next, err := PostgresPosition(26502680, `["26502552","26502680"]`, false)
	require.NoError(t, err)
	mine, err := PostgresPosition(26502424, `[null,"26502424"]`, false)
	require.NoError(t, err)
	key := Position{Commit: ev.Commit, Change: LSN{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, Serial: 1<<63 - 1}
	require.Negative(t, mine.Compare(key))
	require.Positive(t, next.Compare(key))

	// A BEGIN's LSN is not its commit's: no key.
	begin := map[string]any{"status": "BEGIN", "id": "739:26502200", "ts_ms": int64(1)}
	ev, err = txEventFrom(begin)
	require.NoError(t, err)
	require.Equal(t, "postgres:739", ev.Name)
	require.True(t, ev.Commit.IsZero())

	// A data event's block names the transaction by txId alone.
	id, order := txBlock(map[string]any{"id": "739:26502424", "total_order": int64(2), "data_collection_order": int64(1)}, SourcePostgres)
	require.Equal(t, "postgres:739", id)
	require.Equal(t, int64(1), order)
	_, known, err := TxCommit(id)
	require.NoError(t, err)
	require.False(t, known)
	id, _ = txBlock(map[string]any{"id": "0-1-12", "data_collection_order": int64(1)}, SourceMySQL)
	require.Empty(t, id)

	// MariaDB's GTID and MySQL's binlog position bound no position: refused,
	// naming the setting.
	for _, gtid := range []string{"0-1-12", "mysql-bin.000003:1234", "3E11FA47-71CA-11E1-9E33-C80AA9429562:23"} {
		_, err = txEventFrom(end(gtid, "db.items", int64(1)))
		require.ErrorIs(t, err, ErrTransactionSource, gtid)
		require.ErrorContains(t, err, "control.transaction_topic")
	}
}
