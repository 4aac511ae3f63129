package engine

import (
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sqlerr"
)

// The session's users, as in PostgreSQL:
//   - the authenticated user (session.user), who connected;
//   - the session user (session_user), the authenticated user until a
//     superuser's SET SESSION AUTHORIZATION changes it;
//   - the current user (current_user, current_role), the role of SET ROLE,
//     else the session user. Privileges are checked for the current user,
//     and it owns what the session creates.
//
// SET ROLE and SET SESSION AUTHORIZATION are kept with the session's
// parameters (under roleParam and sessionAuthParam), so that a ROLLBACK
// undoes them and a ROLLBACK TO a savepoint restores them as the other
// parameters; RESET ALL leaves them (as PostgreSQL's GUC_NO_RESET_ALL);
// DISCARD ALL resets them. SET LOCAL ROLE lasts until the transaction
// ends (localRole).
const (
	roleParam        = "role"
	sessionAuthParam = "session_authorization"
)

// localRoleState is what a SET LOCAL of the role or session authorization
// hides until its transaction ends: the session-level values then.
type localRoleState struct {
	role, sessionAuth string
	hasRole, hasAuth  bool
}

// SessionUser implements sql.Session.
func (s *session) SessionUser() string {
	if v, ok := s.params[sessionAuthParam]; ok {
		return v
	}
	return s.user
}

// currentUser is the name privileges are checked for.
func (s *session) currentUser() string {
	if v, ok := s.params[roleParam]; ok {
		return v
	}
	return s.SessionUser()
}

// role returns the current user's role; nil when the session's user is
// no role (a trusted connection: see Authenticator), which has a
// superuser's rights. A role set by SET ROLE or SET SESSION AUTHORIZATION
// that was dropped since holds no privileges at all.
func (s *session) role() *catalog.Role {
	name := s.currentUser()
	if r := s.e.roles.ByName(name); r != nil {
		return r
	}
	if name == s.user {
		return nil
	}
	return &catalog.Role{ID: ^uint32(0), Name: name}
}

func (s *session) isSuperuser() bool {
	r := s.role()
	return r == nil || r.Superuser
}

// authenticatedSuperuser reports whether the user who connected is a
// superuser (or no role): who may SET SESSION AUTHORIZATION.
func (s *session) authenticatedSuperuser() bool {
	r := s.e.roles.ByName(s.user)
	return r == nil || r.Superuser
}

// setRoleParam runs SET [LOCAL] ROLE, RESET ROLE, SET SESSION
// AUTHORIZATION and RESET SESSION AUTHORIZATION (name roleParam or
// sessionAuthParam).
func (s *session) setRoleParam(st *ir.SetVar, name string, w pgwire.ResultWriter) error {
	value, reset := st.Value, st.Reset || name == roleParam && strings.EqualFold(st.Value, "none")
	if st.Local && s.tx == nil {
		return w.Notice("WARNING", sqlerr.NoActiveSQLTransaction, "SET LOCAL can only be used in transaction blocks")
	}
	switch name {
	case sessionAuthParam:
		if !s.authenticatedSuperuser() && !(reset || value == s.user) {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to set session authorization")
		}
		if !reset && s.e.roles.ByName(value) == nil {
			return sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", value)
		}
	case roleParam:
		if !reset {
			if err := s.maySetRole(value); err != nil {
				return err
			}
		}
	}
	if st.Local {
		s.hideForLocal()
	} else if s.localRole != nil {
		// A plain SET in the transaction is what its end keeps.
		defer s.keepAfterLocal(name, value, reset)
	}
	if reset {
		delete(s.params, name)
	} else {
		s.params[name] = value
	}
	if name == sessionAuthParam {
		// SET SESSION AUTHORIZATION also ends SET ROLE.
		delete(s.params, roleParam)
		return s.reportSessionUser(w)
	}
	return nil
}

// maySetRole checks SET ROLE name: the role must exist and the session user
// must be a member of it (directly or not, inheriting or not), or a
// superuser.
func (s *session) maySetRole(name string) error {
	r := s.e.roles.ByName(name)
	if r == nil {
		return sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", name)
	}
	su := s.e.roles.ByName(s.SessionUser())
	if su == nil || su.Superuser || s.e.roles.IsMember(su.ID, r.ID, false) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to set role \"%s\"", name)
}

// hideForLocal records, at the first SET LOCAL of a transaction, the
// session-level values its end returns to.
func (s *session) hideForLocal() {
	if s.localRole != nil {
		return
	}
	l := &localRoleState{}
	l.role, l.hasRole = s.params[roleParam]
	l.sessionAuth, l.hasAuth = s.params[sessionAuthParam]
	s.localRole = l
}

// keepAfterLocal makes a plain SET inside a transaction with a SET LOCAL
// the value its commit keeps.
func (s *session) keepAfterLocal(name, value string, reset bool) {
	l := s.localRole
	switch name {
	case roleParam:
		l.role, l.hasRole = value, !reset
	case sessionAuthParam:
		l.sessionAuth, l.hasAuth = value, !reset
		l.role, l.hasRole = "", false
	}
}

// endLocalRole ends the SET LOCAL of the role once its transaction is
// over: committed, the session-level values come back; rolled back, the
// parameters are already those of BEGIN.
func (s *session) endLocalRole(committed bool) {
	l := s.localRole
	if l == nil || s.tx != nil {
		return
	}
	s.localRole = nil
	if !committed {
		return
	}
	for _, p := range []struct {
		name, v string
		ok      bool
	}{{roleParam, l.role, l.hasRole}, {sessionAuthParam, l.sessionAuth, l.hasAuth}} {
		if p.ok {
			s.params[p.name] = p.v
		} else {
			delete(s.params, p.name)
		}
	}
}

// roleParamValue is what SHOW and current_setting show of the role
// parameters; ok is false for other names.
func (s *session) roleParamValue(name string) (string, bool) {
	switch name {
	case roleParam:
		if v, ok := s.params[roleParam]; ok {
			return v, true
		}
		return "none", true
	case sessionAuthParam:
		return s.SessionUser(), true
	case "is_superuser":
		r := s.e.roles.ByName(s.SessionUser())
		return onOff(r == nil || r.Superuser), true
	}
	return "", false
}

// reportSessionUser tells the client of a new session user, as
// PostgreSQL does with ParameterStatus.
func (s *session) reportSessionUser(w pgwire.ResultWriter) error {
	if err := w.ParameterStatus(sessionAuthParam, s.SessionUser()); err != nil {
		return err
	}
	v, _ := s.roleParamValue("is_superuser")
	return w.ParameterStatus("is_superuser", v)
}
