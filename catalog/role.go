package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Role is a user or group (CREATE ROLE / CREATE USER). Roles are shared by
// every database, as in PostgreSQL.
type Role struct {
	ID         uint32 `json:"id"`
	Name       string `json:"name"`
	Superuser  bool   `json:"superuser,omitempty"`
	Login      bool   `json:"login,omitempty"`
	CreateRole bool   `json:"createrole,omitempty"`
	CreateDB   bool   `json:"createdb,omitempty"`
	// Password is the SCRAM-SHA-256 verifier in PostgreSQL's format
	// ("SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>"), an md5
	// hash ("md5" + hex(md5(password + name)), only on a server that
	// authenticates with md5), or "" for a role without a password. The
	// password itself is never kept.
	Password string `json:"password,omitempty"`
	// MemberOf are the roles this role belongs to (GRANT role TO this),
	// whose privileges it inherits unless NoInherit.
	MemberOf []uint32 `json:"member_of,omitempty"`
	// NoInherit is NOINHERIT: the role does not use the privileges of the
	// roles it belongs to without SET ROLE to them.
	NoInherit bool `json:"noinherit,omitempty"`
}

// Encode returns the persistent form of r.
func (r *Role) Encode() ([]byte, error) { return json.Marshal(r) }

// DecodeRole parses the persistent form of a role.
func DecodeRole(b []byte) (*Role, error) {
	r := &Role{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("catalog: corrupt role entry: %w", err)
	}
	return r, nil
}

// Privileges is a set of privileges on an object.
type Privileges uint16

// The privileges, as PostgreSQL's ACL letters.
const (
	PrivSelect Privileges = 1 << iota
	PrivInsert
	PrivUpdate
	PrivDelete
	PrivTruncate
	PrivReferences
	PrivTrigger
	PrivUsage
	PrivCreate
	PrivConnect
	PrivTemporary
	PrivExecute
)

// privNames are the privilege keywords in ACL letter order.
var privNames = [...]struct {
	p      Privileges
	name   string
	letter byte
}{
	{PrivSelect, "SELECT", 'r'}, {PrivInsert, "INSERT", 'a'}, {PrivUpdate, "UPDATE", 'w'},
	{PrivDelete, "DELETE", 'd'}, {PrivTruncate, "TRUNCATE", 'D'}, {PrivReferences, "REFERENCES", 'x'},
	{PrivTrigger, "TRIGGER", 't'}, {PrivUsage, "USAGE", 'U'}, {PrivCreate, "CREATE", 'C'},
	{PrivConnect, "CONNECT", 'c'}, {PrivTemporary, "TEMPORARY", 'T'}, {PrivExecute, "EXECUTE", 'X'},
}

// Privileges that ALL grants on each kind of object.
const (
	RelationPrivileges = PrivSelect | PrivInsert | PrivUpdate | PrivDelete | PrivTruncate | PrivReferences | PrivTrigger
	SchemaPrivileges   = PrivUsage | PrivCreate
	DatabasePrivileges = PrivCreate | PrivConnect | PrivTemporary
	// ColumnPrivileges are those that can be granted on a column.
	ColumnPrivileges = PrivSelect | PrivInsert | PrivUpdate | PrivReferences
)

// ParsePrivilege returns the privilege named name (upper or lower case;
// TEMP is TEMPORARY).
func ParsePrivilege(name string) (Privileges, bool) {
	name = strings.ToUpper(name)
	if name == "TEMP" {
		name = "TEMPORARY"
	}
	for _, p := range privNames {
		if p.name == name {
			return p.p, true
		}
	}
	return 0, false
}

// String lists the privileges in PostgreSQL's ACL letters ("arwd").
func (p Privileges) String() string {
	var b strings.Builder
	for _, n := range privNames {
		if p&n.p != 0 {
			b.WriteByte(n.letter)
		}
	}
	return b.String()
}

// Names returns the privileges' keywords.
func (p Privileges) Names() []string {
	var out []string
	for _, n := range privNames {
		if p&n.p != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// ObjectKind is the kind of object a grant is on.
type ObjectKind byte

const (
	ObjRelation ObjectKind = 'r'
	ObjSchema   ObjectKind = 'n'
	ObjDatabase ObjectKind = 'd'
	// ObjColumn is a column of a relation: ID is the relation's, Column
	// the column's name.
	ObjColumn ObjectKind = 'c'
)

// Object names a securable object: a relation, a schema or a database by
// id, or a column of a relation by the relation's id and its name.
type Object struct {
	Kind ObjectKind
	ID   uint32
	// Column is the column's name (Kind ObjColumn only). Columns are named
	// rather than numbered so that dropping a column cannot move a grant
	// to another one.
	Column string `json:",omitempty"`
}

// ColumnObject is the grant object of column name of relation rel.
func ColumnObject(rel uint32, name string) Object {
	return Object{Kind: ObjColumn, ID: rel, Column: name}
}

// relation is the relation a column object is of, or obj itself.
func (obj Object) relation() Object {
	if obj.Kind == ObjColumn {
		return Object{Kind: ObjRelation, ID: obj.ID}
	}
	return obj
}

// PublicRole is the grantee id of PUBLIC, every role.
const PublicRole uint32 = 0

// builtinSchemaBit marks the object id of a database's built-in schemas
// (public, pg_catalog, information_schema), which have no id of their
// own: BuiltinSchema(db).
const builtinSchemaBit = 1 << 31

// BuiltinSchema is the grant object of the built-in schemas of the
// database with id db.
func BuiltinSchema(db uint32) Object {
	return Object{Kind: ObjSchema, ID: builtinSchemaBit | db}
}

// DefaultPrivileges are what PUBLIC holds on obj until a GRANT or REVOKE
// first changes obj's privileges (PostgreSQL's acldefault): USAGE on the
// built-in schemas (PostgreSQL 15 no longer grants CREATE on public),
// CONNECT and TEMPORARY on databases, nothing on relations or on schemas
// made by CREATE SCHEMA. Owners hold everything besides.
func DefaultPrivileges(obj Object) Privileges {
	switch {
	case obj.Kind == ObjSchema && obj.ID&builtinSchemaBit != 0:
		return PrivUsage
	case obj.Kind == ObjDatabase:
		return PrivConnect | PrivTemporary
	}
	return 0
}

// Grant is the privileges Grantee holds on Object (Grantee PublicRole: every
// role) by the grant of Grantor.
type Grant struct {
	Object  Object     `json:"object"`
	Grantee uint32     `json:"grantee"`
	Privs   Privileges `json:"privs"`
	// Grantable are the privileges of Privs held WITH GRANT OPTION: the
	// grantee may grant them to others.
	Grantable Privileges `json:"grantable,omitempty"`
	// Grantor is the role that granted: 0 for the object's owner or a
	// superuser, else a role that held the privileges with grant option.
	// Revoking a role's grant option takes back what it granted with it.
	Grantor uint32 `json:"grantor,omitempty"`
}

// Encode returns the persistent form of g.
func (g *Grant) Encode() ([]byte, error) { return json.Marshal(g) }

// DecodeGrant parses the persistent form of a grant.
func DecodeGrant(b []byte) (*Grant, error) {
	g := &Grant{}
	if err := json.Unmarshal(b, g); err != nil {
		return nil, fmt.Errorf("catalog: corrupt grant entry: %w", err)
	}
	return g, nil
}

// Roles holds the roles, the grants and the owners of objects created by
// roles other than superusers (an object without a recorded owner belongs
// to the bootstrap superuser). It is safe for concurrent use; entries are
// immutable once added, a change replaces them.
type Roles struct {
	mu     sync.RWMutex
	byName map[string]*Role
	byID   map[uint32]*Role
	grants map[Object]map[grantKey]Grant
	owners map[Object]uint32
	// explicit are the objects whose privileges a GRANT or REVOKE has
	// changed: their grants replace DefaultPrivileges.
	explicit map[Object]bool
}

type grantKey struct {
	grantee, grantor uint32
}

// NewRoles returns an empty role set.
func NewRoles() *Roles {
	return &Roles{byName: map[string]*Role{}, byID: map[uint32]*Role{},
		grants: map[Object]map[grantKey]Grant{}, owners: map[Object]uint32{}, explicit: map[Object]bool{}}
}

// Put adds or replaces r.
func (rs *Roles) Put(r *Role) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if old := rs.byID[r.ID]; old != nil {
		delete(rs.byName, old.Name)
	}
	rs.byName[r.Name] = r
	rs.byID[r.ID] = r
}

// Remove removes the role with id id and its grants.
func (rs *Roles) Remove(id uint32) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.byID[id]; r != nil {
		delete(rs.byName, r.Name)
		delete(rs.byID, id)
	}
	for _, gs := range rs.grants {
		for k := range gs {
			if k.grantee == id || k.grantor == id {
				delete(gs, k)
			}
		}
	}
}

// ByName returns the role named name, or nil.
func (rs *Roles) ByName(name string) *Role {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.byName[name]
}

// ByID returns the role with id id, or nil.
func (rs *Roles) ByID(id uint32) *Role {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.byID[id]
}

// All returns every role, ordered by name.
func (rs *Roles) All() []*Role {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	out := make([]*Role, 0, len(rs.byID))
	for _, r := range rs.byID {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SetGrant records that grantee holds privs on obj by its owner's grant,
// without grant option (none: the grant is removed).
func (rs *Roles) SetGrant(obj Object, grantee uint32, privs Privileges) {
	rs.PutGrant(Grant{Object: obj, Grantee: grantee, Privs: privs})
}

// PutGrant records g, replacing the grant of g.Grantor to g.Grantee on
// g.Object (no privileges: the grant is removed).
func (rs *Roles) PutGrant(g Grant) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	k := grantKey{g.Grantee, g.Grantor}
	if g.Privs == 0 {
		delete(rs.grants[g.Object], k)
		return
	}
	if rs.grants[g.Object] == nil {
		rs.grants[g.Object] = map[grantKey]Grant{}
	}
	g.Grantable &= g.Privs
	rs.grants[g.Object][k] = g
}

// GrantBy returns the grant of grantor to grantee on obj (no privileges:
// none).
func (rs *Roles) GrantBy(obj Object, grantee, grantor uint32) Grant {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	if g, ok := rs.grants[obj][grantKey{grantee, grantor}]; ok {
		return g
	}
	return Grant{Object: obj, Grantee: grantee, Grantor: grantor}
}

// SetExplicit records that obj's grants replace its DefaultPrivileges.
func (rs *Roles) SetExplicit(obj Object) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.explicit[obj] = true
}

// Explicit reports whether obj's grants replace its DefaultPrivileges.
func (rs *Roles) Explicit(obj Object) bool {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.explicit[obj]
}

// Public returns what PUBLIC holds on obj: its grants, or its
// DefaultPrivileges while no GRANT or REVOKE has changed them.
func (rs *Roles) Public(obj Object) Privileges {
	if obj.Kind != ObjColumn && !rs.Explicit(obj) {
		return DefaultPrivileges(obj)
	}
	return rs.Granted(obj, PublicRole)
}

// Granted returns the privileges granted to grantee on obj directly, by
// any grantor.
func (rs *Roles) Granted(obj Object, grantee uint32) Privileges {
	p, _ := rs.granted(obj, grantee)
	return p
}

// granted returns the privileges granted to grantee on obj directly, and
// those of them held with grant option.
func (rs *Roles) granted(obj Object, grantee uint32) (privs, grantable Privileges) {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	for k, g := range rs.grants[obj] {
		if k.grantee == grantee {
			privs |= g.Privs
			grantable |= g.Grantable
		}
	}
	return privs, grantable
}

// Grants returns every grant on obj, ordered by grantee and grantor.
func (rs *Roles) Grants(obj Object) []Grant {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	var out []Grant
	for _, g := range rs.grants[obj] {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Grantee != out[j].Grantee {
			return out[i].Grantee < out[j].Grantee
		}
		return out[i].Grantor < out[j].Grantor
	})
	return out
}

// SetOwner records the owner of obj (0: the bootstrap superuser).
func (rs *Roles) SetOwner(obj Object, owner uint32) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if owner == 0 {
		delete(rs.owners, obj)
	} else {
		rs.owners[obj] = owner
	}
}

// Owner returns the owner of obj (0: the bootstrap superuser); a
// column's is its relation's.
func (rs *Roles) Owner(obj Object) uint32 {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.owners[obj.relation()]
}

// Forget removes obj's grants and owner, once obj is dropped.
func (rs *Roles) Forget(obj Object) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.owners, obj)
	delete(rs.explicit, obj)
	delete(rs.grants, obj)
}

// Owns returns the objects role owns.
func (rs *Roles) Owns(role uint32) []Object {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	var out []Object
	for o, r := range rs.owners {
		if r == role {
			out = append(out, o)
		}
	}
	return out
}

// Effective returns role and every role whose privileges it uses: those
// it is a member of, directly or through other roles, as far as the
// members inherit (a NOINHERIT role uses its own privileges only).
func (rs *Roles) Effective(role uint32) []uint32 { return rs.closure(role, true) }

// Memberships returns role and every role it is a member of, directly or
// through other roles, whether or not it inherits their privileges: the
// roles it may SET ROLE to.
func (rs *Roles) Memberships(role uint32) []uint32 { return rs.closure(role, false) }

// IsMember reports whether role is group or a member of it, directly or
// through other roles (inherit: only as far as the members inherit).
func (rs *Roles) IsMember(role, group uint32, inherit bool) bool {
	for _, id := range rs.closure(role, inherit) {
		if id == group {
			return true
		}
	}
	return false
}

// Members returns the roles that are direct members of group, ordered
// by name.
func (rs *Roles) Members(group uint32) []*Role {
	var out []*Role
	for _, r := range rs.All() {
		for _, g := range r.MemberOf {
			if g == group {
				out = append(out, r)
			}
		}
	}
	return out
}

func (rs *Roles) closure(role uint32, inherit bool) []uint32 {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	seen := map[uint32]bool{role: true}
	out := []uint32{role}
	for i := 0; i < len(out); i++ {
		if r := rs.byID[out[i]]; r != nil && !(inherit && r.NoInherit) {
			for _, m := range r.MemberOf {
				if !seen[m] {
					seen[m] = true
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// Has reports whether role holds every privilege of want on obj: as a
// superuser, as the owner (or a member of the owner), or by grants to it,
// to a role it belongs to, or to PUBLIC (see Public).
func (rs *Roles) Has(role uint32, obj Object, want Privileges) bool {
	if r := rs.ByID(role); r != nil && r.Superuser {
		return true
	}
	eff := rs.Effective(role)
	owner := rs.Owner(obj)
	var held Privileges
	for _, id := range eff {
		if id == owner && owner != 0 {
			return true
		}
		held |= rs.Granted(obj, id)
	}
	held |= rs.Public(obj)
	return held&want == want
}

// HasGrantOption reports whether role may grant every privilege of want on
// obj to others: as a superuser, as the owner, or by grants WITH GRANT
// OPTION to it or to a role it belongs to.
func (rs *Roles) HasGrantOption(role uint32, obj Object, want Privileges) bool {
	_, grantable := rs.Holds(role, obj)
	return grantable&want == want
}

// Holds returns the privileges role holds on obj by grants to it, to a
// role it belongs to or to PUBLIC, and those it holds with grant option;
// a superuser or the owner holds every privilege with grant option.
func (rs *Roles) Holds(role uint32, obj Object) (privs, grantable Privileges) {
	if rs.IsOwner(role, obj) {
		return ^Privileges(0), ^Privileges(0)
	}
	for _, id := range rs.Effective(role) {
		p, g := rs.granted(obj, id)
		privs, grantable = privs|p, grantable|g
	}
	return privs | rs.Public(obj), grantable
}

// IsOwner reports whether role owns obj, is a member of its owner, or is a
// superuser.
func (rs *Roles) IsOwner(role uint32, obj Object) bool {
	if r := rs.ByID(role); r != nil && r.Superuser {
		return true
	}
	owner := rs.Owner(obj)
	if owner == 0 {
		return false
	}
	for _, id := range rs.Effective(role) {
		if id == owner {
			return true
		}
	}
	return false
}
