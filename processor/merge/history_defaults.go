package merge

// DefaultHistoryPath is where a table's history table lives (ADR 0046):
// {path} is the table's own path.
const DefaultHistoryPath = "{path}_history"
