package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestScrape reads unlabelled samples by name and labelled ones by their
// series, as a node's /metrics page writes them.
func TestScrape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# HELP viaduct_catalog_resources x\n# TYPE viaduct_catalog_resources gauge\n",
			"viaduct_catalog_resources 1.5e+06\n",
			"viaduct_fetch_handled_total{source=\"s07\"} 2000\n",
			"viaduct_fetch_handled_total{source=\"s08\"} 12\n",
			"viaduct_fetch_in_flight{source=\"s07\"} 3\n")
	}))
	defer srv.Close()
	if v, ok := metric(srv.URL, "viaduct_catalog_resources"); !ok || v != 1.5e6 {
		t.Errorf("viaduct_catalog_resources = %v, %v", v, ok)
	}
	if _, ok := metric(srv.URL, "viaduct_missing"); ok {
		t.Error("a metric the page does not hold was found")
	}
	h := handled(srv.URL)
	if len(h) != 2 || h["s07"] != 2000 || h["s08"] != 12 {
		t.Errorf("handled = %v", h)
	}
}
