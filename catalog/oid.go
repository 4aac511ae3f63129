package catalog

// PostgreSQL identifies catalog objects by OID. streamsql derives them from
// its own ids, so that they are stable across restarts: an object with id n
// (relations, schemas, databases, functions and state tables share one id
// space) has OID FirstUserOID+n, as PostgreSQL numbers user objects from
// 16384. The built-in schemas, the bootstrap role and the system tables that
// PostgreSQL also has get PostgreSQL's own OIDs.
const (
	FirstUserOID = 16384

	PgCatalogOID         = 11
	PublicOID            = 2200
	InformationSchemaOID = 13000
	// BootstrapRoleOID is the OID of the one role streamsql has: the user
	// a session connected as.
	BootstrapRoleOID = 10
	// DatabaseOwnerOID is pg_database_owner, the role that owns public
	// (PostgreSQL 15's): the owner of the current database.
	DatabaseOwnerOID = 6171
	// DefaultDatabaseOID is the OID of DefaultDatabase.
	DefaultDatabaseOID = 5
)

// InformationSchema holds the SQL standard's views of the catalog. Like
// PgCatalog it is in every database and holds only system tables.
const InformationSchema = "information_schema"

// systemOIDs are PostgreSQL's OIDs of the system catalogs streamsql has.
var systemOIDs = map[string]uint32{
	"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259,
	"pg_authid": 1260, "pg_auth_members": 1261, "pg_database": 1262, "pg_attrdef": 2604,
	"pg_constraint": 2606, "pg_inherits": 2611, "pg_index": 2610, "pg_namespace": 2615,
	"pg_am": 2601, "pg_description": 2609, "pg_depend": 2608, "pg_rewrite": 2618,
	"pg_collation": 3456, "pg_extension": 3079, "pg_policy": 3256,
	"pg_statistic_ext": 3381, "pg_publication": 6104, "pg_publication_rel": 6106,
	"pg_publication_namespace": 6237, "pg_tablespace": 1213,
}

// OID returns the relation's OID: PostgreSQL's for the system catalogs it
// also has, else FirstUserOID plus the id.
func (r *Relation) OID() int64 {
	if r.Kind == SystemTable {
		if o, ok := systemOIDs[r.Name]; ok && r.Schema == PgCatalog {
			return int64(o)
		}
		return int64(r.ID)
	}
	return UserOID(r.ID)
}

// UserOID is the OID of the object with streamsql id id.
func UserOID(id uint32) int64 { return FirstUserOID + int64(id) }

// OID returns the schema's OID.
func (s *Schema) OID() int64 {
	switch s.Name {
	case PgCatalog:
		return PgCatalogOID
	case Public:
		return PublicOID
	case InformationSchema:
		return InformationSchemaOID
	}
	return UserOID(s.ID)
}

// OID returns the database's OID.
func (d *Database) OID() int64 {
	if d.Name == DefaultDatabase {
		return DefaultDatabaseOID
	}
	return UserOID(d.ID)
}

// OID returns the function's OID.
func (f *Function) OID() int64 { return UserOID(f.ID) }

// PrimaryKeyOID is the OID of the index (and of the constraint) a table's
// declared primary key is shown as: its rows' state table is that index.
func (r *Relation) PrimaryKeyOID() int64 { return UserOID(r.StateTable) }

// OID returns the index's OID.
func (x *Index) OID() int64 { return UserOID(x.StateTable) }
