package ir

// CopyInput is the rows a COPY FROM STDIN receives (batch plans only): the
// executor is given them by the statement that runs it.
type CopyInput struct {
	Cols []Column
}

func (r *CopyInput) Columns() []Column { return r.Cols }
