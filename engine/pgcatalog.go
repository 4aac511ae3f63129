package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// The pg_catalog relations PostgreSQL's clients read (psql's \d commands,
// drivers' metadata calls, pg_dump), computed from streamsql's catalog when
// read, with PostgreSQL's column names and the columns those clients use.
// OIDs follow catalog/oid.go; OID-valued columns are bigint (streamsql has
// no oid type). Only one role exists: the user the session connected as,
// with OID catalog.BootstrapRoleOID.

// pgView is what the rows of a pg_catalog relation are computed from.
type pgView struct {
	e    *Engine
	cat  *catalog.Catalog
	user string
}

// pgTable declares a pg_catalog relation: cols is "name type, ..." in
// PostgreSQL's spelling of the column types.
func pgTable(schema, name, cols string, rows func(v *pgView) [][]types.Datum) systemTable {
	// tableoid is PostgreSQL's system column: the OID of the relation.
	c := append(pgColumns(cols), catalog.Column{Name: "tableoid", Type: types.Int64T, Hidden: true})
	rel := &catalog.Relation{Name: name, Schema: schema, Columns: c}
	return systemTable{rel: rel, pg: func(v *pgView) [][]types.Datum {
		rs := rows(v)
		for i := range rs {
			rs[i] = append(rs[i], oid(rel.OID()))
		}
		return rs
	}}
}

// pgColumnTypes maps the column types of pg_catalog relations to streamsql's.
var pgColumnTypes = map[string]types.T{
	"oid": types.Int64T, "regproc": types.Int64T, "regclass": types.Int64T, "regtype": types.Int64T, "xid": types.Int64T,
	"name": types.TextT, "text": types.TextT, "char": types.TextT, "pg_node_tree": types.TextT,
	"bool": types.BoolT, "int2": types.Int16T, "int4": types.Int32T, "int8": types.Int64T,
	"float4": types.Float32T, "float8": types.Float64T, "timestamptz": types.TimestampTZT,
	"text[]": types.ArrayOf(types.TextT), "aclitem[]": types.ArrayOf(types.TextT), "char[]": types.ArrayOf(types.TextT),
	"name[]": types.ArrayOf(types.TextT),
	"oid[]":  types.ArrayOf(types.Int64T), "int2[]": types.ArrayOf(types.Int16T),
	// int2vector and oidvector print as numbers separated by spaces, which
	// is what their readers (pg_dump) parse: they are text here, which
	// subscripts read as numbers (pgJDBC's indoption[k]).
	"oidvector": types.OIDVectorT, "int2vector": types.Int2VectorT,
}

func pgColumns(spec string) []catalog.Column {
	var cols []catalog.Column
	for _, c := range strings.Split(spec, ",") {
		f := strings.Fields(c)
		t, ok := pgColumnTypes[f[1]]
		if len(f) != 2 || !ok {
			panic(fmt.Sprintf("engine: bad pg_catalog column %q", c))
		}
		cols = append(cols, catalog.Column{Name: f[0], Type: t})
	}
	return cols
}

// Datum helpers for the rows below.
var (
	null = types.Null
	no   = types.DBool(false)
	yes  = types.DBool(true)
)

func oid(o int64) types.Datum  { return types.DInt(o) }
func txt(s string) types.Datum { return types.DText(s) }
func i64(n int) types.Datum    { return types.DInt(int64(n)) }
func flag(b bool) types.Datum  { return types.DBool(b) }

// vector is an int2vector or oidvector: the numbers separated by spaces.
func vector[N int | int64](ns []N) types.Datum {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return txt(strings.Join(parts, " "))
}

func int2s(ns []int) types.Datum {
	arr := make([]types.Datum, len(ns))
	for i, n := range ns {
		arr[i] = i64(n)
	}
	return types.Datum{Arr: arr}
}

// visibleAttnums are the attribute numbers of r's columns: the visible ones,
// from 1.
func visibleAttnums(r *catalog.Relation) map[int]int {
	m := map[int]int{}
	for n, i := range r.VisibleColumns() {
		m[i] = n + 1
	}
	return m
}

func attnums(r *catalog.Relation, cols []int) []int {
	m := visibleAttnums(r)
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = m[c]
	}
	return out
}

var pgCatalogTables = []systemTable{
	pgTable(catalog.PgCatalog, "pg_namespace", "oid oid, nspname name, nspowner oid, nspacl aclitem[]", (*pgView).namespaceRows),
	pgTable(catalog.PgCatalog, "pg_class", "oid oid, relname name, relnamespace oid, reltype oid, reloftype oid, relowner oid, relam oid, "+
		"relfilenode oid, reltablespace oid, relpages int4, reltuples float4, relallvisible int4, reltoastrelid oid, "+
		"relhasindex bool, relisshared bool, relpersistence char, relkind char, relnatts int2, relchecks int2, "+
		"relhasrules bool, relhastriggers bool, relhassubclass bool, relrowsecurity bool, relforcerowsecurity bool, "+
		"relispopulated bool, relreplident char, relispartition bool, relrewrite oid, relfrozenxid xid, relminmxid xid, "+
		"relacl aclitem[], reloptions text[], relpartbound pg_node_tree", (*pgView).classRows),
	pgTable(catalog.PgCatalog, "pg_attribute", "attrelid oid, attname name, atttypid oid, attstattarget int4, attlen int2, "+
		"attnum int2, attndims int4, attcacheoff int4, atttypmod int4, attbyval bool, attalign char, attstorage char, "+
		"attcompression char, attnotnull bool, atthasdef bool, atthasmissing bool, attidentity char, attgenerated char, "+
		"attisdropped bool, attislocal bool, attinhcount int4, attcollation oid, attacl aclitem[], attoptions text[], "+
		"attfdwoptions text[], attmissingval text", (*pgView).attributeRows),
	pgTable(catalog.PgCatalog, "pg_type", "oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool, "+
		"typtype char, typcategory char, typispreferred bool, typisdefined bool, typdelim char, typrelid oid, "+
		"typsubscript regproc, typelem oid, typarray oid, typinput regproc, typoutput regproc, typreceive regproc, "+
		"typsend regproc, typmodin regproc, typmodout regproc, typanalyze regproc, typalign char, typstorage char, "+
		"typnotnull bool, typbasetype oid, typtypmod int4, typndims int4, typcollation oid, typdefaultbin pg_node_tree, "+
		"typdefault text, typacl aclitem[]", (*pgView).typeRows),
	pgTable(catalog.PgCatalog, "pg_index", "indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2, indisunique bool, "+
		"indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool, indisclustered bool, "+
		"indisvalid bool, indcheckxmin bool, indisready bool, indislive bool, indisreplident bool, indkey int2vector, "+
		"indcollation oidvector, indclass oidvector, indoption int2vector, indexprs pg_node_tree, indpred pg_node_tree", (*pgView).indexRows),
	pgTable(catalog.PgCatalog, "pg_constraint", "oid oid, conname name, connamespace oid, contype char, condeferrable bool, "+
		"condeferred bool, convalidated bool, conrelid oid, contypid oid, conindid oid, conparentid oid, confrelid oid, "+
		"confupdtype char, confdeltype char, confmatchtype char, conislocal bool, coninhcount int4, connoinherit bool, "+
		"conkey int2[], confkey int2[], conbin pg_node_tree", (*pgView).constraintRows),
	pgTable(catalog.PgCatalog, "pg_attrdef", "oid oid, adrelid oid, adnum int2, adbin pg_node_tree", (*pgView).attrdefRows),
	pgTable(catalog.PgCatalog, "pg_database", "oid oid, datname name, datdba oid, encoding int4, datlocprovider char, "+
		"datistemplate bool, datallowconn bool, datconnlimit int4, datfrozenxid xid, datminmxid xid, dattablespace oid, "+
		"datcollate text, datctype text, daticulocale text, datcollversion text, datacl aclitem[]", (*pgView).databaseRows),
	pgTable(catalog.PgCatalog, "pg_roles", "rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool, "+
		"rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text, rolvaliduntil timestamptz, "+
		"rolbypassrls bool, rolconfig text[], oid oid", (*pgView).roleRows),
	pgTable(catalog.PgCatalog, "pg_authid", "oid oid, rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, "+
		"rolcreatedb bool, rolcanlogin bool, rolreplication bool, rolbypassrls bool, rolconnlimit int4, rolpassword text, "+
		"rolvaliduntil timestamptz", (*pgView).authidRows),
	pgTable(catalog.PgCatalog, "pg_user", "usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool, "+
		"usebypassrls bool, passwd text, valuntil timestamptz, useconfig text[]", (*pgView).userRows),
	pgTable(catalog.PgCatalog, "pg_auth_members", "oid oid, roleid oid, member oid, grantor oid, admin_option bool", (*pgView).authMembersRows),
	pgTable(catalog.PgCatalog, "pg_description", "objoid oid, classoid oid, objsubid int4, description text", (*pgView).descriptionRows),
	pgTable(catalog.PgCatalog, "pg_shdescription", "objoid oid, classoid oid, description text", none),
	pgTable(catalog.PgCatalog, "pg_proc", "oid oid, proname name, pronamespace oid, proowner oid, prolang oid, procost float4, "+
		"prorows float4, provariadic oid, prosupport regproc, prokind char, prosecdef bool, proleakproof bool, "+
		"proisstrict bool, proretset bool, provolatile char, proparallel char, pronargs int2, pronargdefaults int2, "+
		"prorettype oid, proargtypes oidvector, proallargtypes oid[], proargmodes char[], proargnames text[], "+
		"proargdefaults pg_node_tree, protrftypes oid[], prosrc text, probin text, prosqlbody pg_node_tree, "+
		"proconfig text[], proacl aclitem[]", (*pgView).procRows),
	pgTable(catalog.PgCatalog, "pg_am", "oid oid, amname name, amhandler regproc, amtype char", (*pgView).amRows),
	pgTable(catalog.PgCatalog, "pg_collation", "oid oid, collname name, collnamespace oid, collowner oid, collprovider char, "+
		"collisdeterministic bool, collencoding int4, collcollate text, collctype text, colliculocale text, collversion text", (*pgView).collationRows),
	pgTable(catalog.PgCatalog, "pg_extension", "oid oid, extname name, extowner oid, extnamespace oid, extrelocatable bool, "+
		"extversion text, extconfig oid[], extcondition text[]", none),
	pgTable(catalog.PgCatalog, "pg_inherits", "inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool", none),
	pgTable(catalog.PgCatalog, "pg_depend", "classid oid, objid oid, objsubid int4, refclassid oid, refobjid oid, "+
		"refobjsubid int4, deptype char", (*pgView).dependRows),
	pgTable(catalog.PgCatalog, "pg_rewrite", "oid oid, rulename name, ev_class oid, ev_type char, ev_enabled char, "+
		"is_instead bool, ev_qual pg_node_tree, ev_action pg_node_tree", none),
	pgTable(catalog.PgCatalog, "pg_policy", "oid oid, polname name, polrelid oid, polcmd char, polpermissive bool, "+
		"polroles oid[], polqual pg_node_tree, polwithcheck pg_node_tree", none),
	pgTable(catalog.PgCatalog, "pg_statistic_ext", "oid oid, stxrelid oid, stxname name, stxnamespace oid, stxowner oid, "+
		"stxstattarget int4, stxkeys int2vector, stxkind char[]", none),
	pgTable(catalog.PgCatalog, "pg_publication", "oid oid, pubname name, pubowner oid, puballtables bool, pubinsert bool, "+
		"pubupdate bool, pubdelete bool, pubtruncate bool, pubviaroot bool", none),
	pgTable(catalog.PgCatalog, "pg_publication_rel", "oid oid, prpubid oid, prrelid oid, prqual pg_node_tree, prattrs int2[]", none),
	pgTable(catalog.PgCatalog, "pg_publication_namespace", "oid oid, pnpubid oid, pnnspid oid", none),
	pgTable(catalog.PgCatalog, "pg_tablespace", "oid oid, spcname name, spcowner oid, spcacl aclitem[], spcoptions text[]", (*pgView).tablespaceRows),
	pgTable(catalog.PgCatalog, "pg_settings", "name text, setting text, unit text, category text, short_desc text, "+
		"extra_desc text, context text, vartype text, source text, min_val text, max_val text, enumvals text[], "+
		"boot_val text, reset_val text, sourcefile text, sourceline int4, pending_restart bool", (*pgView).settingRows),
	pgTable(catalog.PgCatalog, "pg_tables", "schemaname name, tablename name, tableowner name, tablespace name, "+
		"hasindexes bool, hasrules bool, hastriggers bool, rowsecurity bool", (*pgView).tablesRows),
	pgTable(catalog.PgCatalog, "pg_views", "schemaname name, viewname name, viewowner name, definition text", (*pgView).viewsRows),
	pgTable(catalog.PgCatalog, "pg_matviews", "schemaname name, matviewname name, matviewowner name, tablespace name, "+
		"hasindexes bool, ispopulated bool, definition text", (*pgView).matviewsRows),
	pgTable(catalog.PgCatalog, "pg_indexes", "schemaname name, tablename name, indexname name, tablespace name, indexdef text", (*pgView).indexesRows),
	pgTable(catalog.PgCatalog, "pg_stat_activity", "datid oid, datname name, pid int4, usesysid oid, usename name, "+
		"application_name text, client_addr text, backend_start timestamptz, xact_start timestamptz, "+
		"query_start timestamptz, state_change timestamptz, wait_event_type text, wait_event text, state text, "+
		"backend_xid xid, backend_xmin xid, query text, backend_type text", (*pgView).activityRows),
	// What pg_dump reads of the objects streamsql does not have.
	pgTable(catalog.PgCatalog, "pg_init_privs", "objoid oid, classoid oid, objsubid int4, privtype char, initprivs aclitem[]", none),
	pgTable(catalog.PgCatalog, "pg_language", "oid oid, lanname name, lanowner oid, lanispl bool, lanpltrusted bool, "+
		"lanplcallfoid oid, laninline oid, lanvalidator oid, lanacl aclitem[]", (*pgView).languageRows),
	pgTable(catalog.PgCatalog, "pg_operator", "oid oid, oprname name, oprnamespace oid, oprowner oid, oprkind char, "+
		"oprleft oid, oprright oid, oprresult oid, oprcode regproc", none),
	pgTable(catalog.PgCatalog, "pg_opclass", "oid oid, opcmethod oid, opcname name, opcnamespace oid, opcowner oid, "+
		"opcfamily oid, opcintype oid, opcdefault bool", none),
	pgTable(catalog.PgCatalog, "pg_opfamily", "oid oid, opfmethod oid, opfname name, opfnamespace oid, opfowner oid", none),
	pgTable(catalog.PgCatalog, "pg_amop", "oid oid, amopfamily oid, amoplefttype oid, amoprighttype oid, amopstrategy int2, "+
		"amoppurpose char, amopopr oid, amopmethod oid, amopsortfamily oid", none),
	pgTable(catalog.PgCatalog, "pg_amproc", "oid oid, amprocfamily oid, amproclefttype oid, amprocrighttype oid, "+
		"amprocnum int2, amproc regproc", none),
	pgTable(catalog.PgCatalog, "pg_ts_parser", "oid oid, prsname name, prsnamespace oid, prsstart regproc, prstoken regproc, "+
		"prsend regproc, prsheadline regproc, prslextype regproc", none),
	pgTable(catalog.PgCatalog, "pg_ts_template", "oid oid, tmplname name, tmplnamespace oid, tmplinit regproc, tmpllexize regproc", none),
	pgTable(catalog.PgCatalog, "pg_ts_dict", "oid oid, dictname name, dictnamespace oid, dictowner oid, dicttemplate oid, dictinitoption text", none),
	pgTable(catalog.PgCatalog, "pg_ts_config", "oid oid, cfgname name, cfgnamespace oid, cfgowner oid, cfgparser oid", none),
	pgTable(catalog.PgCatalog, "pg_foreign_data_wrapper", "oid oid, fdwname name, fdwowner oid, fdwhandler oid, "+
		"fdwvalidator oid, fdwacl aclitem[], fdwoptions text[]", none),
	pgTable(catalog.PgCatalog, "pg_foreign_server", "oid oid, srvname name, srvowner oid, srvfdw oid, srvtype text, "+
		"srvversion text, srvacl aclitem[], srvoptions text[]", none),
	pgTable(catalog.PgCatalog, "pg_foreign_table", "ftrelid oid, ftserver oid, ftoptions text[]", none),
	pgTable(catalog.PgCatalog, "pg_user_mapping", "oid oid, umuser oid, umserver oid, umoptions text[]", none),
	pgTable(catalog.PgCatalog, "pg_default_acl", "oid oid, defaclrole oid, defaclnamespace oid, defaclobjtype char, defaclacl aclitem[]", none),
	pgTable(catalog.PgCatalog, "pg_conversion", "oid oid, conname name, connamespace oid, conowner oid, conforencoding int4, "+
		"contoencoding int4, conproc regproc, condefault bool", none),
	pgTable(catalog.PgCatalog, "pg_cast", "oid oid, castsource oid, casttarget oid, castfunc oid, castcontext char, castmethod char", none),
	pgTable(catalog.PgCatalog, "pg_range", "rngtypid oid, rngsubtype oid, rngmultitypid oid, rngcollation oid, rngsubopc oid, "+
		"rngcanonical regproc, rngsubdiff regproc", none),
	pgTable(catalog.PgCatalog, "pg_enum", "oid oid, enumtypid oid, enumsortorder float4, enumlabel name", none),
	pgTable(catalog.PgCatalog, "pg_transform", "oid oid, trftype oid, trflang oid, trffromsql regproc, trftosql regproc", none),
	pgTable(catalog.PgCatalog, "pg_event_trigger", "oid oid, evtname name, evtevent name, evtowner oid, evtfoid oid, "+
		"evtenabled char, evttags text[]", none),
	pgTable(catalog.PgCatalog, "pg_trigger", "oid oid, tgrelid oid, tgparentid oid, tgname name, tgfoid oid, tgtype int2, "+
		"tgenabled char, tgisinternal bool, tgconstrrelid oid, tgconstrindid oid, tgconstraint oid, tgdeferrable bool, "+
		"tginitdeferred bool, tgnargs int2, tgattr int2vector, tgqual pg_node_tree", none),
	pgTable(catalog.PgCatalog, "pg_subscription", "oid oid, subdbid oid, subname name, subowner oid, subenabled bool, "+
		"subbinary bool, substream bool, subtwophasestate char, subdisableonerr bool, subconninfo text, subslotname name, "+
		"subsynccommit text, subpublications text[]", none),
	pgTable(catalog.PgCatalog, "pg_seclabel", "objoid oid, classoid oid, objsubid int4, provider text, label text", none),
	pgTable(catalog.PgCatalog, "pg_seclabels", "objoid oid, classoid oid, objsubid int4, objtype text, objnamespace oid, "+
		"objname text, provider text, label text", none),
	pgTable(catalog.PgCatalog, "pg_largeobject_metadata", "oid oid, lomowner oid, lomacl aclitem[]", none),
	pgTable(catalog.PgCatalog, "pg_sequence", "seqrelid oid, seqtypid oid, seqstart int8, seqincrement int8, seqmax int8, "+
		"seqmin int8, seqcache int8, seqcycle bool", none),
	pgTable(catalog.PgCatalog, "pg_partitioned_table", "partrelid oid, partstrat char, partnatts int2, partdefid oid, "+
		"partattrs int2vector, partclass oidvector, partcollation oidvector, partexprs pg_node_tree", none),
	pgTable(catalog.PgCatalog, "pg_aggregate", "aggfnoid regproc, aggkind char, aggnumdirectargs int2, aggtransfn regproc, "+
		"aggfinalfn regproc, aggtranstype oid, agginitval text", none),
	pgTable(catalog.InformationSchema, "schemata", "catalog_name name, schema_name name, schema_owner name, "+
		"default_character_set_catalog name, default_character_set_schema name, default_character_set_name name, sql_path text", (*pgView).schemataRows),
	pgTable(catalog.InformationSchema, "tables", "table_catalog name, table_schema name, table_name name, table_type text, "+
		"self_referencing_column_name name, reference_generation text, user_defined_type_catalog name, "+
		"user_defined_type_schema name, user_defined_type_name name, is_insertable_into text, is_typed text, commit_action text", (*pgView).infoTablesRows),
	pgTable(catalog.InformationSchema, "columns", "table_catalog name, table_schema name, table_name name, column_name name, "+
		"ordinal_position int4, column_default text, is_nullable text, data_type text, character_maximum_length int4, "+
		"character_octet_length int4, numeric_precision int4, numeric_precision_radix int4, numeric_scale int4, "+
		"datetime_precision int4, udt_catalog name, udt_schema name, udt_name name, is_identity text, is_generated text, "+
		"is_updatable text", (*pgView).infoColumnsRows),
	pgTable(catalog.InformationSchema, "views", "table_catalog name, table_schema name, table_name name, view_definition text, "+
		"check_option text, is_updatable text, is_insertable_into text", (*pgView).infoViewsRows),
	pgTable(catalog.InformationSchema, "table_constraints", "constraint_catalog name, constraint_schema name, "+
		"constraint_name name, table_catalog name, table_schema name, table_name name, constraint_type text, "+
		"is_deferrable text, initially_deferred text, enforced text, nulls_distinct text", (*pgView).infoConstraintRows),
	pgTable(catalog.InformationSchema, "key_column_usage", "constraint_catalog name, constraint_schema name, "+
		"constraint_name name, table_catalog name, table_schema name, table_name name, column_name name, "+
		"ordinal_position int4, position_in_unique_constraint int4", (*pgView).infoKeyColumnRows),
	pgTable(catalog.InformationSchema, "column_privileges", "grantor name, grantee name, table_catalog name, "+
		"table_schema name, table_name name, column_name name, privilege_type text, is_grantable text", (*pgView).infoColumnPrivilegeRows),
}

// none is the rows of a relation streamsql has nothing for.
func none(*pgView) [][]types.Datum { return nil }

// entries are what pg_class lists (sql.PgClassEntries).
func (v *pgView) entries() []sql.PgClassEntry { return sql.PgClassEntries(v.cat) }

func (v *pgView) namespaceRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, s := range v.cat.Schemas() {
		owner := int64(catalog.BootstrapRoleOID)
		if s.Name == catalog.Public {
			owner = catalog.DatabaseOwnerOID
		}
		rows = append(rows, []types.Datum{oid(s.OID()), txt(s.Name), oid(owner), null})
	}
	return rows
}

func (v *pgView) classRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		r := e.Rel
		natts := len(r.VisibleColumns())
		hasIndex := e.Kind != "i" && (r.PrimaryKey || len(r.Indexes) > 0)
		am := int64(0)
		if e.Kind == "i" {
			am = 403
			cols, _ := e.IndexColumns()
			natts = len(cols)
		} else if e.Kind == "r" || e.Kind == "m" {
			am = 2
		}
		rows = append(rows, []types.Datum{
			oid(e.OID), txt(e.Name), oid(sql.PgNamespaceOID(v.cat, e.Schema)), oid(0), oid(0), oid(catalog.BootstrapRoleOID), oid(am),
			oid(e.OID), oid(0), i64(0), types.DFloat(-1), i64(0), oid(0),
			flag(hasIndex), no, txt("p"), txt(e.Kind), i64(natts), i64(0),
			no, no, no, no, no,
			yes, txt("d"), no, oid(0), oid(0), oid(0),
			null, null, null,
		})
	}
	return rows
}

func (v *pgView) attributeRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		r := e.Rel
		key := map[int]bool{}
		if r.PrimaryKey {
			for _, k := range r.Key {
				key[k] = true
			}
		}
		cols := r.VisibleColumns()
		if e.Kind == "i" {
			// An index's attributes are the columns it holds.
			keys, _ := e.IndexColumns()
			cols = keys
			if e.Index != nil {
				cols = append(append([]int(nil), keys...), e.Index.Include...)
			}
		}
		for n, i := range cols {
			c := r.Columns[i]
			storage := "p"
			if c.Type.Size() < 0 {
				storage = "x"
			}
			coll := int64(0)
			if c.Type.Kind == types.Text {
				coll = 100
			}
			ndims := 0
			if c.Type.Kind == types.Array {
				ndims = 1
			}
			rows = append(rows, []types.Datum{
				oid(e.OID), txt(c.Name), oid(sql.ColumnTypeOID(c.Type)), i64(-1), i64(int(c.Type.Size())),
				i64(n + 1), i64(ndims), i64(-1), i64(int(c.Type.Typmod())), flag(c.Type.Size() > 0 && c.Type.Size() <= 8), txt("i"), txt(storage),
				txt(""), flag(c.NotNull || key[i]), flag(c.Default != "" && e.Kind != "i"), no, txt(""), txt(""),
				no, yes, i64(0), oid(coll), v.columnACL(e, c), null, null, null,
			})
		}
	}
	return rows
}

func (v *pgView) typeRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, t := range sql.PgTypes {
		typtype, delim, align, storage := "b", ",", "i", "p"
		if t.Name == "record" || t.Name == "_record" {
			typtype = "p"
		}
		if t.Len == 8 {
			align = "d"
		} else if t.Len < 0 {
			storage = "x"
		}
		coll := int64(0)
		switch t.OID {
		case 25, 1042, 1043, 19:
			coll = 100
		}
		rows = append(rows, []types.Datum{
			oid(t.OID), txt(t.Name), oid(catalog.PgCatalogOID), oid(catalog.BootstrapRoleOID), i64(int(t.Len)), flag(t.Len > 0 && t.Len <= 8),
			txt(typtype), txt(t.Category), no, yes, txt(delim), oid(0),
			oid(0), oid(t.Elem), oid(t.Array), oid(0), oid(0), oid(0),
			oid(0), oid(0), oid(0), oid(0), txt(align), txt(storage),
			no, oid(0), i64(-1), i64(0), oid(coll), null,
			null, null,
		})
	}
	return rows
}

func (v *pgView) indexRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		if e.Kind != "i" {
			continue
		}
		cols, _ := e.IndexColumns()
		keys := attnums(e.Rel, cols)
		all := keys
		if e.Index != nil {
			all = append(append([]int(nil), keys...), attnums(e.Rel, e.Index.Include)...)
		}
		rows = append(rows, []types.Datum{
			oid(e.OID), oid(e.Rel.OID()), i64(len(all)), i64(len(keys)), flag(e.Unique()),
			no, flag(e.PrimaryKey), no, yes, no,
			yes, no, yes, yes, no, vector(all),
			null, null, null, null, null,
		})
	}
	return rows
}

func (v *pgView) constraintRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		if !e.PrimaryKey {
			continue
		}
		rows = append(rows, []types.Datum{
			oid(e.OID), txt(e.Name), oid(sql.PgNamespaceOID(v.cat, e.Schema)), txt("p"), no,
			no, yes, oid(e.Rel.OID()), oid(0), oid(e.OID), oid(0), oid(0),
			txt(" "), txt(" "), txt(" "), yes, i64(0), yes,
			int2s(attnums(e.Rel, e.Rel.Key)), null, null,
		})
	}
	return rows
}

func (v *pgView) attrdefRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		if e.Kind != "r" || e.Rel.Kind != catalog.Table {
			continue
		}
		for n, i := range e.Rel.VisibleColumns() {
			if d := e.Rel.Columns[i].Default; d != "" {
				rows = append(rows, []types.Datum{oid(e.OID<<8 + int64(n+1)), oid(e.OID), i64(n + 1), txt(d)})
			}
		}
	}
	return rows
}

func (v *pgView) databaseRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, d := range v.cat.Databases() {
		rows = append(rows, []types.Datum{
			oid(d.OID()), txt(d.Name), oid(catalog.BootstrapRoleOID), i64(6), txt("c"),
			no, yes, i64(-1), oid(0), oid(0), oid(1663),
			txt("C"), txt("C"), null, null, null,
		})
	}
	return rows
}

// pgRole is a role as the catalogs show it.
type pgRole struct {
	oid                                int64
	name                               string
	super, createRole, createDB, login bool
	noInherit                          bool
}

// roles lists the roles: the bootstrap superuser with PostgreSQL's OID 10,
// the others by id, then pg_database_owner; a session user that is no role
// (a trusted development connection) shows as a superuser too.
func (v *pgView) roles() []pgRole {
	boot := v.e.opts.Superuser
	if boot == "" {
		boot = DefaultSuperuser
	}
	var out []pgRole
	known := false
	for _, r := range v.e.roles.All() {
		o := catalog.UserOID(r.ID)
		if r.Name == boot {
			o = catalog.BootstrapRoleOID
		}
		known = known || r.Name == v.user
		out = append(out, pgRole{o, r.Name, r.Superuser, r.CreateRole, r.CreateDB, r.Login, r.NoInherit})
	}
	if !known && v.user != "" {
		out = append(out, pgRole{catalog.FirstUserOID - 1, v.user, true, true, true, true, false})
	}
	return out
}

func (v *pgView) roleRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, r := range v.roles() {
		rows = append(rows, []types.Datum{txt(r.name), flag(r.super), flag(!r.noInherit), flag(r.createRole),
			flag(r.createDB), flag(r.login), no, i64(-1), txt("********"), null, flag(r.super), null, oid(r.oid)})
	}
	return append(rows, []types.Datum{txt("pg_database_owner"), no, yes, no, no, no, no, i64(-1), txt("********"), null, no, null, oid(catalog.DatabaseOwnerOID)})
}

func (v *pgView) authidRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, r := range v.roles() {
		rows = append(rows, []types.Datum{oid(r.oid), txt(r.name), flag(r.super), flag(!r.noInherit), flag(r.createRole),
			flag(r.createDB), flag(r.login), no, flag(r.super), i64(-1), null, null})
	}
	return append(rows, []types.Datum{oid(catalog.DatabaseOwnerOID), txt("pg_database_owner"), no, yes, no, no, no, no, no, i64(-1), null, null})
}

// descriptionRows holds the one comment PostgreSQL's clients expect: that
// of the public schema.
func (v *pgView) descriptionRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, d := range sql.Descriptions(v.cat) {
		rows = append(rows, []types.Datum{oid(d.OID), oid(d.ClassOID), i64(int(d.SubID)), txt(d.Text)})
	}
	return rows
}

func (v *pgView) userRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, r := range v.roles() {
		if r.login {
			rows = append(rows, []types.Datum{txt(r.name), oid(r.oid), flag(r.createDB), flag(r.super), no, flag(r.super), txt("********"), null, null})
		}
	}
	return rows
}

func (v *pgView) procRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, f := range v.cat.Functions() {
		args := make([]int64, len(f.ArgTypes))
		names := make([]types.Datum, len(f.ArgTypes))
		for i, t := range f.ArgTypes {
			args[i] = sql.ColumnTypeOID(t)
			names[i] = txt(f.ArgNames[i])
		}
		argNames := null
		if len(f.ArgNames) > 0 {
			argNames = types.Datum{Arr: names}
		}
		vol := "v"
		switch f.Volatility {
		case "immutable":
			vol = "i"
		case "stable":
			vol = "s"
		}
		rows = append(rows, []types.Datum{
			oid(f.OID()), txt(f.Name), oid(sql.PgNamespaceOID(v.cat, f.Schema)), oid(catalog.BootstrapRoleOID), oid(14), types.DFloat(100),
			types.DFloat(0), oid(0), oid(0), txt("f"), no, no,
			flag(f.Strict), no, txt(vol), txt("u"), i64(len(f.ArgTypes)), i64(0),
			oid(sql.ColumnTypeOID(f.Result)), vector(args), null, null, argNames,
			null, null, txt(f.Body), null, null,
			null, null,
		})
	}
	return rows
}

func (v *pgView) languageRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, l := range []struct {
		oid  int64
		name string
	}{{12, "internal"}, {13, "c"}, {14, "sql"}} {
		rows = append(rows, []types.Datum{oid(l.oid), txt(l.name), oid(catalog.BootstrapRoleOID), no, no, oid(0), oid(0), oid(0), null})
	}
	return rows
}

func (v *pgView) amRows() [][]types.Datum {
	return [][]types.Datum{
		{oid(2), txt("heap"), oid(0), txt("t")},
		{oid(403), txt("btree"), oid(0), txt("i")},
	}
}

func (v *pgView) collationRows() [][]types.Datum {
	return [][]types.Datum{
		{oid(100), txt("default"), oid(catalog.PgCatalogOID), oid(catalog.BootstrapRoleOID), txt("d"), yes, i64(-1), null, null, null, null},
		{oid(950), txt("C"), oid(catalog.PgCatalogOID), oid(catalog.BootstrapRoleOID), txt("c"), yes, i64(-1), txt("C"), txt("C"), null, null},
	}
}

func (v *pgView) tablespaceRows() [][]types.Datum {
	return [][]types.Datum{{oid(1663), txt("pg_default"), oid(catalog.BootstrapRoleOID), null, null}}
}

// dependRows records that each view depends on the relations it reads
// (deptype n), as PostgreSQL's rewrite rules do.
func (v *pgView) dependRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		if e.Kind != "v" && e.Kind != "m" || e.Rel.Kind == catalog.SystemTable {
			continue
		}
		for _, id := range e.Rel.Uses() {
			if dep := v.cat.ByID(id); dep != nil {
				rows = append(rows, []types.Datum{oid(1259), oid(e.OID), i64(0), oid(1259), oid(dep.OID()), i64(0), txt("n")})
			}
		}
	}
	return rows
}

func (v *pgView) settingRows() [][]types.Datum {
	names := make([]string, 0, len(parameters))
	for n := range parameters {
		names = append(names, n)
	}
	sort.Strings(names)
	var rows [][]types.Datum
	for _, n := range names {
		p := parameters[n]
		ctx := "user"
		if p.readOnly {
			ctx = "internal"
		}
		rows = append(rows, []types.Datum{
			txt(n), txt(p.def), null, txt("streamsql"), txt(p.desc),
			null, txt(ctx), txt("string"), txt("default"), null, null, null,
			txt(p.def), txt(p.def), null, null, no,
		})
	}
	return rows
}

// userEntries are the entries not in pg_catalog or information_schema.
func (v *pgView) userEntries(kinds string) []sql.PgClassEntry {
	var out []sql.PgClassEntry
	for _, e := range v.entries() {
		if e.Rel.Kind != catalog.SystemTable && strings.Contains(kinds, e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

func (v *pgView) tablesRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		if e.Kind != "r" && e.Kind != "f" {
			continue
		}
		rows = append(rows, []types.Datum{txt(e.Schema), txt(e.Name), txt(v.user), null, flag(e.Rel.PrimaryKey || len(e.Rel.Indexes) > 0), no, no, no})
	}
	return rows
}

func (v *pgView) viewsRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.userEntries("v") {
		rows = append(rows, []types.Datum{txt(e.Schema), txt(e.Name), txt(v.user), txt(sql.ViewQuery(v.cat, e.Rel))})
	}
	return rows
}

func (v *pgView) matviewsRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.userEntries("m") {
		rows = append(rows, []types.Datum{txt(e.Schema), txt(e.Name), txt(v.user), null, no, yes, txt(sql.ViewQuery(v.cat, e.Rel))})
	}
	return rows
}

func (v *pgView) indexesRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.userEntries("i") {
		rows = append(rows, []types.Datum{txt(e.Schema), txt(e.Rel.Name), txt(e.Name), null, txt(e.IndexDef())})
	}
	return rows
}

func (v *pgView) schemataRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, s := range v.cat.Schemas() {
		rows = append(rows, []types.Datum{txt(v.cat.DatabaseName()), txt(s.Name), txt(v.user), null, null, null, null})
	}
	return rows
}

func (v *pgView) infoTablesRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		typ, insertable := "", "NO"
		switch e.Kind {
		case "r":
			typ, insertable = "BASE TABLE", "YES"
			if e.Rel.Kind == catalog.SystemTable {
				insertable = "NO"
			}
		case "v":
			typ = "VIEW"
		case "f":
			typ = "FOREIGN"
		default:
			continue // materialized views are not in information_schema.tables, as in PostgreSQL
		}
		rows = append(rows, []types.Datum{txt(v.cat.DatabaseName()), txt(e.Schema), txt(e.Name), txt(typ),
			null, null, null, null, null, txt(insertable), txt("NO"), null})
	}
	return rows
}

func (v *pgView) infoColumnsRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.entries() {
		if e.Kind == "i" || e.Kind == "m" {
			continue
		}
		r := e.Rel
		key := map[int]bool{}
		if r.PrimaryKey {
			for _, k := range r.Key {
				key[k] = true
			}
		}
		for n, i := range r.VisibleColumns() {
			c := r.Columns[i]
			dt := sql.FormatType(sql.ColumnTypeOID(c.Type), -1, false)
			if c.Type.Kind == types.Array {
				dt = "ARRAY"
			}
			nullable := "YES"
			if c.NotNull || key[i] {
				nullable = "NO"
			}
			maxLen, octets, prec, radix, scale, dtPrec := null, null, null, null, null, null
			switch c.Type.Kind {
			case types.Text:
				if c.Type.Width > 0 {
					maxLen, octets = i64(int(c.Type.Width)), i64(int(c.Type.Width)*4)
				} else {
					octets = i64(1073741824)
				}
			case types.Int16:
				prec, radix, scale = i64(16), i64(2), i64(0)
			case types.Int32:
				prec, radix, scale = i64(32), i64(2), i64(0)
			case types.Int64:
				prec, radix, scale = i64(64), i64(2), i64(0)
			case types.Float32:
				prec, radix = i64(24), i64(2)
			case types.Float64:
				prec, radix = i64(53), i64(2)
			case types.Numeric:
				radix = i64(10)
				if c.Type.HasTypmod {
					prec, scale = i64(int(c.Type.Precision)), i64(int(c.Type.Scale))
				}
			case types.Date:
				dtPrec = i64(0)
			case types.Timestamp, types.TimestampTZ, types.Interval:
				dtPrec = i64(6)
			}
			udt := ""
			if t, ok := sqlTypeByOID(sql.ColumnTypeOID(c.Type)); ok {
				udt = t
			}
			def := null
			if c.Default != "" {
				def = txt(c.Default)
			}
			updatable := "NO"
			if r.Kind == catalog.Table {
				updatable = "YES"
			}
			rows = append(rows, []types.Datum{
				txt(v.cat.DatabaseName()), txt(e.Schema), txt(e.Name), txt(c.Name),
				i64(n + 1), def, txt(nullable), txt(dt), maxLen,
				octets, prec, radix, scale,
				dtPrec, txt(v.cat.DatabaseName()), txt(catalog.PgCatalog), txt(udt), txt("NO"), txt("NEVER"),
				txt(updatable),
			})
		}
	}
	return rows
}

func sqlTypeByOID(o int64) (string, bool) {
	for _, t := range sql.PgTypes {
		if t.OID == o {
			return t.Name, true
		}
	}
	return "", false
}

func (v *pgView) infoViewsRows() [][]types.Datum {
	var rows [][]types.Datum
	for _, e := range v.userEntries("v") {
		rows = append(rows, []types.Datum{txt(v.cat.DatabaseName()), txt(e.Schema), txt(e.Name), txt(sql.ViewQuery(v.cat, e.Rel)),
			txt("NONE"), txt("NO"), txt("NO")})
	}
	return rows
}

func (v *pgView) infoConstraintRows() [][]types.Datum {
	var rows [][]types.Datum
	db := txt(v.cat.DatabaseName())
	for _, e := range v.userEntries("i") {
		if !e.PrimaryKey {
			continue
		}
		rows = append(rows, []types.Datum{db, txt(e.Schema), txt(e.Name), db, txt(e.Schema), txt(e.Rel.Name),
			txt("PRIMARY KEY"), txt("NO"), txt("NO"), txt("YES"), null})
	}
	return rows
}

func (v *pgView) infoKeyColumnRows() [][]types.Datum {
	var rows [][]types.Datum
	db := txt(v.cat.DatabaseName())
	for _, e := range v.userEntries("i") {
		if !e.PrimaryKey {
			continue
		}
		for n, k := range e.Rel.Key {
			rows = append(rows, []types.Datum{db, txt(e.Schema), txt(e.Name), db, txt(e.Schema), txt(e.Rel.Name),
				txt(e.Rel.Columns[k].Name), i64(n + 1), null})
		}
	}
	return rows
}
