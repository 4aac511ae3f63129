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
	// whose privileges it inherits.
	MemberOf []uint32 `json:"member_of,omitempty"`
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
)

// Object names a securable object: a relation, a schema or a database by id.
type Object struct {
	Kind ObjectKind
	ID   uint32
}

// PublicRole is the grantee id of PUBLIC, every role.
const PublicRole uint32 = 0

// Grant is the privileges Grantee holds on Object (Grantee PublicRole: every
// role).
type Grant struct {
	Object  Object     `json:"object"`
	Grantee uint32     `json:"grantee"`
	Privs   Privileges `json:"privs"`
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
	grants map[grantKey]Privileges
	owners map[Object]uint32
}

type grantKey struct {
	obj     Object
	grantee uint32
}

// NewRoles returns an empty role set.
func NewRoles() *Roles {
	return &Roles{byName: map[string]*Role{}, byID: map[uint32]*Role{},
		grants: map[grantKey]Privileges{}, owners: map[Object]uint32{}}
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
	for k := range rs.grants {
		if k.grantee == id {
			delete(rs.grants, k)
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

// SetGrant records that grantee holds privs on obj (none: the grant is
// removed).
func (rs *Roles) SetGrant(obj Object, grantee uint32, privs Privileges) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	k := grantKey{obj, grantee}
	if privs == 0 {
		delete(rs.grants, k)
	} else {
		rs.grants[k] = privs
	}
}

// Granted returns the privileges granted to grantee on obj directly.
func (rs *Roles) Granted(obj Object, grantee uint32) Privileges {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.grants[grantKey{obj, grantee}]
}

// Grants returns every grant on obj, ordered by grantee.
func (rs *Roles) Grants(obj Object) []Grant {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	var out []Grant
	for k, p := range rs.grants {
		if k.obj == obj {
			out = append(out, Grant{Object: obj, Grantee: k.grantee, Privs: p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Grantee < out[j].Grantee })
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

// Owner returns the owner of obj (0: the bootstrap superuser).
func (rs *Roles) Owner(obj Object) uint32 {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.owners[obj]
}

// Forget removes obj's grants and owner, once obj is dropped.
func (rs *Roles) Forget(obj Object) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.owners, obj)
	for k := range rs.grants {
		if k.obj == obj {
			delete(rs.grants, k)
		}
	}
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

// Effective returns role and every role it is a member of, directly or
// through other roles.
func (rs *Roles) Effective(role uint32) []uint32 {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	seen := map[uint32]bool{role: true}
	out := []uint32{role}
	for i := 0; i < len(out); i++ {
		if r := rs.byID[out[i]]; r != nil {
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
// to a role it belongs to, or to PUBLIC.
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
	held |= rs.Granted(obj, PublicRole)
	return held&want == want
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
