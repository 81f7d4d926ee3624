package codecs

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Source is the database family whose order key a [Position] holds. Every
// family maps its key into the same 28 bytes, so the replay guard, delete
// tombstones, chain folding and completeness compare positions without
// knowing the family; see docs/adr/0044-source-order-keys.md.
//
// A position records its family in Commit[0]: 0 for SQL Server (whose LSN's
// first byte is the top byte of a virtual log file number, never near the
// tags), a tag for the others, whose keys fill at most the last 8 bytes of
// Commit and Change. All positions of one table come from one family, so the
// tag never decides an order.
type Source uint8

// Source families.
const (
	SourceSQLServer Source = iota
	SourcePostgres
	SourceMySQL // MySQL and MariaDB: Debezium's binlog connectors
)

// Tags in Commit[0].
const (
	tagPostgres = 0xf1
	tagMySQL    = 0xf2
)

// String names the family.
func (s Source) String() string {
	switch s {
	case SourcePostgres:
		return "postgres"
	case SourceMySQL:
		return "mysql"
	}
	return "sqlserver"
}

// Source reports the family of p's key.
func (p Position) Source() Source {
	switch p.Commit[0] {
	case tagPostgres:
		return SourcePostgres
	case tagMySQL:
		return SourceMySQL
	}
	return SourceSQLServer
}

func taggedUint(tag byte, v uint64) LSN {
	var l LSN
	l[0] = tag
	binary.BigEndian.PutUint64(l[2:], v)
	return l
}

func (l LSN) low64() uint64 { return binary.BigEndian.Uint64(l[2:]) }

// pgFirstTx is the last-commit part of a streaming PostgreSQL event that
// Debezium sends before it has seen any commit since it started from a
// snapshot (sequence [null, lsn]): above every snapshot event (0) and below
// every real LSN, so a transaction whose changes were written before the
// snapshot's LSN but committed after it still orders after the snapshot.
const pgFirstTx = 1

// PostgresPosition builds the position of a PostgreSQL event from Debezium's
// source.lsn and source.sequence, the JSON text ["last committed LSN",
// "current LSN"] with either part possibly null. The order is (last
// committed LSN, lsn): pgoutput sends transactions in commit order, each
// transaction's last-committed LSN is the end of the transaction before it,
// and lsn orders the changes inside one transaction. lsn alone does not
// order transactions: a transaction that commits later may have written its
// changes earlier.
func PostgresPosition(lsn int64, sequence string, snapshot bool) (Position, error) {
	return postgresPosition(lsn, sequence, snapshot)
}

func postgresPosition[T string | []byte](lsn int64, sequence T, snapshot bool) (Position, error) {
	if lsn <= 0 {
		return Position{}, fmt.Errorf("%w: postgres source.lsn %d", ErrBadEnvelope, lsn)
	}
	last, ok, err := pgLastCommit(sequence)
	if err != nil {
		return Position{}, err
	}
	switch {
	case ok && last < pgFirstTx+1:
		return Position{}, fmt.Errorf("%w: postgres source.sequence %q: last committed LSN %d", ErrBadEnvelope, sequence, last)
	case !ok && !snapshot:
		last = pgFirstTx
	}
	return Position{Commit: taggedUint(tagPostgres, last), Change: taggedUint(0, uint64(lsn))}, nil
}

// pgLastCommit parses the first element of Debezium's sequence array:
// null, or a decimal LSN in quotes. The second element repeats source.lsn.
func pgLastCommit[T string | []byte](s T) (v uint64, ok bool, err error) {
	bad := func() (uint64, bool, error) {
		return 0, false, fmt.Errorf("%w: postgres source.sequence %q, want [\"<last committed LSN>\"|null,\"<LSN>\"|null]", ErrBadEnvelope, s)
	}
	if len(s) < 2 || s[0] != '[' {
		return bad()
	}
	i := 1
	if len(s) >= 5 && string(s[1:5]) == "null" {
		i = 5
	} else {
		if s[1] != '"' {
			return bad()
		}
		j := 2
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 2 || j >= len(s) || s[j] != '"' {
			return bad()
		}
		if v, err = strconv.ParseUint(string(s[2:j]), 10, 64); err != nil {
			return bad()
		}
		ok, i = true, j+1
	}
	if i >= len(s) || s[i] != ',' || s[len(s)-1] != ']' {
		return bad()
	}
	return v, ok, nil
}

// MySQLPosition builds the position of a MySQL or MariaDB event from
// Debezium's source.file ("binlog.000042"), source.pos (the binlog position
// of the row event) and source.row (the row's index in that event). The
// order is the binlog's own: file sequence number, position, row. A
// snapshot's events all carry the binlog position the snapshot was taken
// at; streaming rows count from 1 so that a change at that same position
// orders after them. Binlog coordinates order one server's log only: after
// a fail-over to another server they are not comparable.
func MySQLPosition(file string, pos, row int64, snapshot bool) (Position, error) {
	return mysqlPosition(file, pos, row, snapshot)
}

func mysqlPosition[T string | []byte](file T, pos, row int64, snapshot bool) (Position, error) {
	seq, err := binlogSequence(file)
	if err != nil {
		return Position{}, err
	}
	if pos < 0 || row < 0 {
		return Position{}, fmt.Errorf("%w: mysql source.pos %d, source.row %d", ErrBadEnvelope, pos, row)
	}
	serial := row + 1
	if snapshot {
		serial = 0
	}
	return Position{Commit: taggedUint(tagMySQL, seq), Change: taggedUint(0, uint64(pos)), Serial: serial}, nil
}

// binlogSequence reads the number after the last dot of a binlog file name.
func binlogSequence[T string | []byte](file T) (uint64, error) {
	i := len(file) - 1
	for i >= 0 && file[i] >= '0' && file[i] <= '9' {
		i--
	}
	if i < 0 || file[i] != '.' || i == len(file)-1 {
		return 0, fmt.Errorf("%w: mysql source.file %q is not <base>.<number>", ErrBadEnvelope, file)
	}
	n, err := strconv.ParseUint(string(file[i+1:]), 10, 64)
	if err != nil || n >= 1<<63 {
		return 0, fmt.Errorf("%w: mysql source.file %q is not <base>.<number>", ErrBadEnvelope, file)
	}
	return n, nil
}

// appendPgLSN appends a PostgreSQL LSN as PostgreSQL renders it
// ("16/B374D848").
func appendPgLSN(dst []byte, v uint64) []byte {
	dst = appendUpperHex(dst, v>>32)
	return appendUpperHex(append(dst, '/'), v&0xffffffff)
}

// appendUpperHex appends v in upper-case hex without leading zeros (%X).
func appendUpperHex(dst []byte, v uint64) []byte {
	const digits = "0123456789ABCDEF"
	var buf [16]byte
	i := len(buf)
	for {
		i--
		buf[i] = digits[v&0xf]
		v >>= 4
		if v == 0 {
			break
		}
	}
	return append(dst, buf[i:]...)
}

// CommitText renders the transaction part of p in its source's notation:
// SQL Server's commit LSN, PostgreSQL's last committed LSN ("" for the
// snapshot, "0/1" before Debezium saw a commit), the binlog file's sequence
// number for MySQL.
func (p Position) CommitText() string { return string(p.AppendCommitText(nil)) }

// AppendCommitText appends [Position.CommitText]'s rendering of p to dst.
func (p Position) AppendCommitText(dst []byte) []byte {
	switch p.Source() {
	case SourcePostgres:
		if v := p.Commit.low64(); v != 0 {
			return appendPgLSN(dst, v)
		}
		return dst
	case SourceMySQL:
		return strconv.AppendUint(dst, p.Commit.low64(), 10)
	}
	return p.Commit.appendText(dst)
}

// ChangeText renders the change part of p in its source's notation: SQL
// Server's change LSN, PostgreSQL's LSN, the binlog position for MySQL.
func (p Position) ChangeText() string { return string(p.AppendChangeText(nil)) }

// AppendChangeText appends [Position.ChangeText]'s rendering of p to dst.
func (p Position) AppendChangeText(dst []byte) []byte {
	switch p.Source() {
	case SourcePostgres:
		return appendPgLSN(dst, p.Change.low64())
	case SourceMySQL:
		return strconv.AppendUint(dst, p.Change.low64(), 10)
	}
	return p.Change.appendText(dst)
}
