package catalog

// CreationSchemaOf is the schema a relation named in schema ("" if
// unqualified) is created in: schema itself, else the first schema of path
// that exists (see CreationSchema).
func (c *Catalog) CreationSchemaOf(schema string, path []string) string {
	if schema != "" {
		return schema
	}
	return c.CreationSchema(path)
}

// ResolveName returns the relation named schema.name, or name in path when
// schema is "" (see Resolve); nil if there is none.
func (c *Catalog) ResolveName(path []string, schema, name string) *Relation {
	if schema != "" {
		return c.LookupIn(schema, name)
	}
	return c.Resolve(path, name)
}
