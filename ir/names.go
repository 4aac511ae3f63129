package ir

// ObjectName is a possibly schema-qualified name as written in a statement;
// Schema is "" when the name is unqualified.
type ObjectName struct {
	Schema string
	Name   string
}

func (n ObjectName) String() string {
	if n.Schema == "" {
		return n.Name
	}
	return n.Schema + "." + n.Name
}
