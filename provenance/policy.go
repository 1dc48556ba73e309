package provenance

import "strings"

// Action is what happens to a link inherited from the upstream entry.
type Action int

const (
	// Drop means the link is not passed on.
	Drop Action = iota
	// Keep means the link is passed on exactly as the upstream wrote it.
	Keep
	// Rewrite means the link is pointed at the aggregator's copy of its
	// target when the aggregator holds one, and dropped otherwise.
	Rewrite
)

func (a Action) String() string {
	switch a {
	case Keep:
		return "keep"
	case Rewrite:
		return "rewrite"
	}
	return "drop"
}

// Rule is one row of the inheritance policy: a link relation, what happens
// to it, and why.
type Rule struct {
	Rel    string
	Action Action
	Why    string
}

// PatchRel is the relation type of a link to a patch (spec 14.4).
const PatchRel = "http://www.openarchives.org/rs/terms/patch"

// rules is the whole inheritance policy of spec 14.8, in one place. A rel
// that is not listed is dropped (see Unknown). It is never written to.
var rules = [...]Rule{
	{"via", Keep, "the upstream is itself an aggregator: its via already points at the origin and is kept as the only via"},
	{"collection", Drop, "membership of an upstream collection is not membership of the aggregator's"},
	{"canonical", Drop, "the canonical form is the origin's, which the via link already names"},
	{"duplicate", Drop, "upstream mirrors are not verified copies of the aggregator's bytes"},
	{"memento", Drop, "prior versions live at the origin's archive, not at the aggregator"},
	{"timegate", Drop, "prior versions live at the origin's archive, not at the aggregator"},
	{"timemap", Drop, "prior versions live at the origin's archive, not at the aggregator"},
	{PatchRel, Drop, "a patch applies to the upstream's sequence of versions, which the aggregator does not reproduce"},
	{"patch", Drop, "short form of the patch relation, treated alike"},
	{"describedby", Rewrite, "metadata is useful downstream when the aggregator holds its own copy of it"},
	{"describes", Rewrite, "the described resource is useful downstream when the aggregator holds its own copy of it"},
	{"alternate", Rewrite, "an alternate representation is useful downstream when the aggregator holds its own copy of it"},
}

// Rules returns a copy of the inheritance policy, for documentation and
// tests.
func Rules() []Rule { return append([]Rule(nil), rules[:]...) }

// Unknown is the action for any rel the table does not list. Such links are
// dropped: the aggregator cannot tell whether they stay true of its copy
// (spec 14.8 asks to refrain when in doubt), and a Destination that wants
// them follows the via link to the origin's own description.
const Unknown = Drop

// ActionFor returns what happens to an inherited link with rel. Relation
// types compare case-insensitively (RFC 8288).
func ActionFor(rel string) Action {
	rel = strings.ToLower(strings.TrimSpace(rel))
	for _, r := range rules {
		if r.Rel == rel {
			return r.Action
		}
	}
	return Unknown
}
