package admin

import (
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
)

// authorize lets through requests that carry the admin token, as a bearer
// token or as the password of HTTP Basic authentication (so a browser can
// open the status page), and refuses the others saying why.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := s.refusal(r); why != "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="viaduct admin", charset="UTF-8"`)
			s.log.Info("admin request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "why", why)
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: why})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refusal is why r may not be served, or empty.
func (s *Server) refusal(r *http.Request) string {
	got, present := credential(r)
	if !present && s.cfg.AllowNoTokenOnLoopback && loopbackClient(r) {
		return ""
	}
	switch {
	case s.token == "" && s.cfg.AllowNoTokenOnLoopback:
		return "admin requests without a token are allowed from loopback only, and no admin token is configured"
	case s.token == "":
		return "no admin token is configured: set admin.token_file or " + TokenEnv + " (or admin.allow_no_token_on_loopback for a loopback-only node)"
	case !present:
		return "no admin token: send the header Authorization: Bearer <token>, the token in admin.token_file or " + TokenEnv
	case subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1:
		return "the admin token sent does not match this node's"
	}
	return ""
}

// credential is the token r carries, from a Bearer or Basic Authorization.
func credential(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, rest, _ := strings.Cut(h, " ")
	switch strings.ToLower(scheme) {
	case "bearer":
		return strings.TrimSpace(rest), true
	case "basic":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
		if err != nil {
			return "", true
		}
		_, pass, _ := strings.Cut(string(b), ":")
		return pass, true
	}
	return "", true
}

func loopbackClient(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	return err == nil && isLoopbackHost(host)
}
