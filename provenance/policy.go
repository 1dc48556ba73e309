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
	// RewriteOrKeep means the link is pointed at the aggregator's copy of
	// its target when the aggregator holds one, and kept as the upstream
	// wrote it otherwise.
	RewriteOrKeep
)

func (a Action) String() string {
	switch a {
	case Keep:
		return "keep"
	case Rewrite:
		return "rewrite"
	case RewriteOrKeep:
		return "rewrite, else keep"
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
// docs/republish.md explains each row for the Destinations that use them.
//
// What is kept is what stays true of the aggregator's copy, whose bytes
// are verified to be the origin's: facts about the resource (its profile,
// the collections it belongs to, its metadata) and the origin's own
// archive of its versions, which Destinations use and which the via link
// alone would make them fetch the origin's lists to learn. What is dropped
// offers other bytes in place of the verified copy (mirrors, patches, the
// canonical form) or cannot be judged.
var rules = [...]Rule{
	{"via", Keep, "the upstream is itself an aggregator: its via already points at the origin and is kept as the only via"},
	{"profile", Keep, "the profile the content conforms to (RFC 6906, spec 14.5) is a property of the bytes, which the copy shares"},
	{"collection", Keep, "membership of the origin's collection (an ORE Aggregation, an OAI-PMH Set; spec 14.7) is a fact about the resource; Destinations select by it"},
	{"canonical", Drop, "the canonical form is the origin's, which the via link already names"},
	{"duplicate", Drop, "upstream mirrors are not verified copies of the aggregator's bytes"},
	{"memento", Keep, "the origin's archived version (spec 14.6) stays at the origin; the link is a way back to it, not a copy offered here"},
	{"timegate", Keep, "the origin's TimeGate (spec 14.6): versions live at the origin's archive, which the link points at"},
	{"timemap", Keep, "the origin's TimeMap (spec 14.6): versions live at the origin's archive, which the link points at"},
	{"original", Keep, "Memento's link from a version to its original resource, which is the origin's"},
	{PatchRel, Drop, "a patch applies to the upstream's sequence of versions, which the aggregator does not reproduce"},
	{"patch", Drop, "short form of the patch relation, treated alike"},
	{"describedby", RewriteOrKeep, "metadata about the resource (spec 14.5): the aggregator's copy when it holds one, else the origin's, which describes the same bytes"},
	{"describes", RewriteOrKeep, "the resource a metadata record describes (spec 14.5): the aggregator's copy when it holds one, else the origin's"},
	{"alternate", Rewrite, "another representation is offered in place of this one, so only as a copy the aggregator verified"},
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
