package eval

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/streamsql/streamsql/sqlerr"
)

// likeMatcher is a compiled LIKE/ILIKE pattern. It is immutable and safe for
// concurrent use.
//
// Patterns made of literal runs and '%' only (the common case) match with
// strings.HasPrefix/HasSuffix/Index and no allocation; patterns with '_' use a
// wildcard matcher over runes. ILIKE compares runes through unicode.ToLower
// rather than allocating lower-cased copies.
type likeMatcher struct {
	fold bool
	// segs are the pattern split at '%' into literal parts; for a pattern
	// without '_' the text matches if it starts with segs[0], ends with the
	// last segment and contains the middle ones in order.
	segs    []string
	simple  bool // no '_' in the pattern
	anyOnly bool // pattern is only '%'s
	// toks is the general form: each token is a literal rune, '_' (any one
	// rune) or '%' (any run).
	toks []likeTok
}

type likeTok struct {
	kind byte // 'c' literal, '_' any rune, '%' any run
	r    rune
}

var errLikeEscape = sqlerr.New("22025", "LIKE pattern must not end with escape character")

// compileLike compiles pattern with '\' as the escape character.
func compileLike(pattern string, fold bool) (*likeMatcher, *sqlerr.Error) {
	m := &likeMatcher{fold: fold, simple: true, anyOnly: true}
	var cur strings.Builder
	for i := 0; i < len(pattern); {
		r, sz := utf8.DecodeRuneInString(pattern[i:])
		i += sz
		switch r {
		case '\\':
			if i >= len(pattern) {
				return nil, errLikeEscape
			}
			r, sz = utf8.DecodeRuneInString(pattern[i:])
			i += sz
			m.toks = append(m.toks, likeTok{'c', r})
			cur.WriteRune(r)
			m.anyOnly = false
		case '%':
			if n := len(m.toks); n > 0 && m.toks[n-1].kind == '%' {
				continue // %% is %
			}
			m.toks = append(m.toks, likeTok{kind: '%'})
			m.segs = append(m.segs, cur.String())
			cur.Reset()
		case '_':
			m.toks = append(m.toks, likeTok{kind: '_'})
			m.simple, m.anyOnly = false, false
		default:
			m.toks = append(m.toks, likeTok{'c', r})
			cur.WriteRune(r)
			m.anyOnly = false
		}
	}
	m.segs = append(m.segs, cur.String())
	return m, nil
}

// match reports whether s matches the pattern.
func (m *likeMatcher) match(s string) bool {
	if m.anyOnly {
		return len(m.segs) > 1 || s == ""
	}
	if m.simple && !m.fold {
		return matchSegs(s, m.segs)
	}
	return matchToks(s, m.toks, m.fold)
}

// matchSegs matches s against literal segments separated by '%'.
func matchSegs(s string, segs []string) bool {
	if len(segs) == 1 {
		return s == segs[0]
	}
	first, last := segs[0], segs[len(segs)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, seg := range segs[1 : len(segs)-1] {
		i := strings.Index(s, seg)
		if i < 0 {
			return false
		}
		s = s[i+len(seg):]
	}
	return true
}

func runeEq(a, b rune, fold bool) bool {
	if a == b {
		return true
	}
	if !fold {
		return false
	}
	return unicode.ToLower(a) == unicode.ToLower(b)
}

// matchToks is the general matcher: iterative with one backtrack point per
// '%' (the classic wildcard algorithm), linear in practice.
func matchToks(s string, toks []likeTok, fold bool) bool {
	si, ti := 0, 0
	starTi, starSi := -1, 0
	for si < len(s) {
		if ti < len(toks) {
			switch t := toks[ti]; t.kind {
			case '%':
				starTi, starSi = ti, si
				ti++
				continue
			case '_':
				_, sz := utf8.DecodeRuneInString(s[si:])
				si += sz
				ti++
				continue
			default:
				r, sz := utf8.DecodeRuneInString(s[si:])
				if runeEq(r, t.r, fold) {
					si += sz
					ti++
					continue
				}
			}
		}
		if starTi < 0 {
			return false
		}
		// Let the last '%' absorb one more rune and retry.
		_, sz := utf8.DecodeRuneInString(s[starSi:])
		starSi += sz
		si = starSi
		ti = starTi + 1
	}
	for ti < len(toks) && toks[ti].kind == '%' {
		ti++
	}
	return ti == len(toks)
}

// likeFor returns the matcher of a non-constant pattern, reusing the last one
// compiled on this kctx.
func (k *kctx) likeFor(pattern string, fold bool) (*likeMatcher, *sqlerr.Error) {
	if k.like != nil && k.likePat == pattern && k.likeFold == fold {
		return k.like, nil
	}
	m, err := compileLike(pattern, fold)
	if err != nil {
		return nil, err
	}
	k.like, k.likePat, k.likeFold = m, strings.Clone(pattern), fold
	return m, nil
}
