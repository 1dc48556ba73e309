package sim

import (
	"io"
	"strconv"
	"strings"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// document is one XML document the Source serves; write streams it.
type document struct {
	write func(w io.Writer, s *Source, base string, f Fault) error
}

// document finds the document served at path p.
func (s *Source) document(p string) (document, bool) {
	if d, ok := s.dumpDocument(p); ok {
		return d, true
	}
	switch p {
	case PathDescription:
		return document{writeDescription}, true
	case PathCapabilities:
		return document{writeCapabilities}, true
	case PathResourceList:
		return document{writeResourceList}, true
	case PathChangeList:
		if s.cfg.NoChangeLists {
			return document{}, false
		}
		return document{writeChangeListIndex}, true
	}
	if n, ok := numbered(p, "/resourcelist-"); ok {
		if n < 1 || n > s.parts() {
			return document{}, false
		}
		return document{func(w io.Writer, s *Source, base string, f Fault) error {
			return writeResourceListPart(w, s, base, f, n)
		}}, true
	}
	if k, j, ok := changeListPiece(p); ok && !s.cfg.NoChangeLists {
		if cur := s.currentPeriod(); k > cur || j >= len(s.pieces(k, cur)) {
			return document{}, false
		}
		return document{func(w io.Writer, s *Source, base string, f Fault) error {
			return writeChangeList(w, s, base, f, k, j)
		}}, true
	}
	return document{}, false
}

// changeListPiece reads period k and piece j from /changelist-K.xml
// (j = 0) or /changelist-K-J.xml (J >= 1).
func changeListPiece(p string) (k, j int, ok bool) {
	if k, ok = numbered(p, "/changelist-"); ok {
		return k, 0, true
	}
	rest, ok := strings.CutPrefix(p, "/changelist-")
	if !ok {
		return 0, 0, false
	}
	kk, jj, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, 0, false
	}
	if k, ok = numbered("/"+kk+".xml", "/"); !ok {
		return 0, 0, false
	}
	if j, ok = numbered("/"+jj, "/"); !ok || j < 1 {
		return 0, 0, false
	}
	return k, j, true
}

// numbered reads N from prefix + N + ".xml".
func numbered(p, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, ".xml")
	if !ok || digits == "" || digits[0] == '0' && digits != "0" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n >= 0
}

// writeEntries writes a document from its header and entries.
func writeEntries(w io.Writer, h *resourcesync.Header, entries ...resourcesync.Entry) error {
	wr, err := resourcesync.NewWriter(w, h)
	if err != nil {
		return err
	}
	for i := range entries {
		if err := wr.Write(&entries[i]); err != nil {
			return err
		}
	}
	return wr.Close()
}

func up(href string) []resourcesync.Link {
	return []resourcesync.Link{{Rel: "up", Href: href}}
}

func writeDescription(w io.Writer, s *Source, base string, _ Fault) error {
	return writeEntries(w,
		&resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapDescription}},
		resourcesync.Entry{
			Loc: base + PathCapabilities,
			MD:  &resourcesync.MD{Capability: resourcesync.CapCapabilityList},
		})
}

func writeCapabilities(w io.Writer, s *Source, base string, _ Fault) error {
	entries := []resourcesync.Entry{{
		Loc: base + PathResourceList,
		MD:  &resourcesync.MD{Capability: resourcesync.CapResourceList},
	}}
	if !s.cfg.NoChangeLists {
		entries = append(entries, resourcesync.Entry{
			Loc: base + PathChangeList,
			MD:  &resourcesync.MD{Capability: resourcesync.CapChangeList},
		})
	}
	entries = append(entries, s.dumpCapabilities(base)...)
	entries = append(entries, s.channelEntries()...)
	return writeEntries(w, &resourcesync.Header{
		MD:    resourcesync.MD{Capability: resourcesync.CapCapabilityList},
		Links: up(base + PathDescription),
	}, entries...)
}
