package merge

// Settle waits for an apply in flight to end, its commit landed or failed:
// a data file listed before Settle returns is then referenced by the table
// or was never committed. VACUUM relies on it (tableops.VacuumOptions.Listed).
func (s *Sink) Settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
}

// Settle is [Sink.Settle] for a change log.
func (l *ChangeLog) Settle() {
	l.mu.Lock()
	defer l.mu.Unlock()
}

// Settle is [Sink.Settle] for a history table.
func (h *History) Settle() {
	h.mu.Lock()
	defer h.mu.Unlock()
}
