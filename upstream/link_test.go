package upstream

import (
	"reflect"
	"testing"
)

func TestParseLinkHeader(t *testing.T) {
	cases := []struct {
		in   string
		want []Link
	}{
		{`<http://example.com/dataset1/capabilitylist.xml>;
rel="resourcesync"`, []Link{{Target: "http://example.com/dataset1/capabilitylist.xml", Rel: []string{"resourcesync"}}}},
		{`<a>; rel="up  Index", <b>;rel=next;title="x, \"y\"";type=text/html`, []Link{
			{Target: "a", Rel: []string{"up", "index"}},
			{Target: "b", Rel: []string{"next"}, Params: map[string]string{"title": `x, "y"`, "type": "text/html"}},
		}},
		{`<a>; rel=first; rel=second; anchor="#x"; anchor="#y"`, []Link{
			{Target: "a", Rel: []string{"first"}, Params: map[string]string{"anchor": "#x"}},
		}},
		{`garbage, <ok>; rel=up`, []Link{{Target: "ok", Rel: []string{"up"}}}},
		{`<a>; rel="unterminated`, []Link{{Target: "a", Rel: []string{"unterminated"}}}},
		{`<a>; title="has, comma" junk, <b>`, []Link{{Target: "a", Params: map[string]string{"title": "has, comma"}}, {Target: "b"}}},
		{`<no-end`, nil},
		{``, nil},
	}
	for _, tc := range cases {
		got := ParseLinkHeader(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseLinkHeader(%q)\n got %#v\nwant %#v", tc.in, got, tc.want)
		}
	}
}

func FuzzParseLinkHeader(f *testing.F) {
	for _, s := range []string{`<a>; rel="up"`, `<a>;rel=x,<b>;t="\"",`, `;;;,,<`, `<a>; rel="`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range ParseLinkHeader(s) {
			for _, r := range l.Rel {
				if r == "" {
					t.Fatalf("empty rel from %q", s)
				}
			}
		}
	})
}
