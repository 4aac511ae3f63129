package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Database is a namespace of schemas (CREATE DATABASE). Every database
// holds the built-in schemas public and pg_catalog; DefaultDatabase always
// exists and is not stored. A session works in the database it connected
// to; names never reach across databases.
type Database struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
}

// DefaultDatabase is the database that always exists, and where the
// relations of catalogs from before databases live.
const DefaultDatabase = "dev"

// Encode returns the persistent form of d.
func (d *Database) Encode() ([]byte, error) { return json.Marshal(d) }

// DecodeDatabase parses the persistent form of a database.
func DecodeDatabase(b []byte) (*Database, error) {
	d := &Database{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("catalog: corrupt database entry: %w", err)
	}
	return d, nil
}

// AddDatabase adds d with its built-in schemas.
func (c *Catalog) AddDatabase(d *Database) {
	c.idx.mu.Lock()
	defer c.idx.mu.Unlock()
	c.idx.databases[d.Name] = d
	for _, s := range []string{Public, PgCatalog, InformationSchema} {
		c.idx.schemas[schemaName{d.Name, s}] = &Schema{Name: s, Database: d.Name}
	}
}

// RemoveDatabase removes the database named name and its built-in schemas.
// Its relations and other schemas must have been removed.
func (c *Catalog) RemoveDatabase(name string) {
	c.idx.mu.Lock()
	defer c.idx.mu.Unlock()
	delete(c.idx.databases, name)
	for k := range c.idx.schemas {
		if k.db == name {
			delete(c.idx.schemas, k)
		}
	}
}

// Database returns the database named name, or nil.
func (c *Catalog) Database(name string) *Database {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	return c.idx.databases[name]
}

// Databases returns every database, ordered by name.
func (c *Catalog) Databases() []*Database {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	out := make([]*Database, 0, len(c.idx.databases))
	for _, d := range c.idx.databases {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// InDatabase returns the relations of the handle's database, ordered by id.
func (c *Catalog) InDatabase() []*Relation {
	var out []*Relation
	for _, r := range c.All() {
		if r.Database == c.db {
			out = append(out, r)
		}
	}
	return out
}
