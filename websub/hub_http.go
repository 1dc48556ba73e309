package websub

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxRequestBody bounds a subscription request's form.
const maxRequestBody = 64 << 10

// request is a subscription request the hub accepted and is verifying.
type request struct {
	mode     string
	topic    string
	callback *url.URL
	secret   string
	lease    time.Duration
}

// ServeHTTP takes WebSub subscribe and unsubscribe requests: it checks
// them, answers 202 Accepted, and verifies the subscriber's intent
// asynchronously. Only the verified request takes effect.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	req, status, err := h.parseRequest(w, r)
	if err != nil {
		h.log.Info("websub hub: refused request", "remote", r.RemoteAddr, "err", err)
		http.Error(w, err.Error(), status)
		return
	}
	h.mu.Lock()
	_, known := h.subs[SubscriptionID(req.topic, req.callback.String())]
	switch {
	case h.closed:
		h.mu.Unlock()
		http.Error(w, "hub is shutting down", http.StatusServiceUnavailable)
		return
	case h.pending >= h.cfg.MaxSubscriptions,
		req.mode == "subscribe" && !known && len(h.subs)+h.pending >= h.cfg.MaxSubscriptions:
		h.mu.Unlock()
		http.Error(w, "hub holds as many subscriptions as it may", http.StatusServiceUnavailable)
		return
	}
	h.pending++
	h.wg.Add(1)
	h.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	go h.verify(req)
}

// parseRequest reads and checks a subscription request; the status is the
// one to answer when err is not nil.
func (h *Hub) parseRequest(w http.ResponseWriter, r *http.Request) (*request, int, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return nil, http.StatusUnsupportedMediaType, errors.New("a subscription request is an application/x-www-form-urlencoded form")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
	if err := r.ParseForm(); err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("reading the form: %w", err)
	}
	f := r.PostForm
	req := &request{mode: f.Get("hub.mode"), topic: f.Get("hub.topic"), secret: f.Get("hub.secret")}
	if req.mode != "subscribe" && req.mode != "unsubscribe" {
		return nil, http.StatusBadRequest, fmt.Errorf("hub.mode %q is not subscribe or unsubscribe", req.mode)
	}
	if req.topic == "" || !h.hasTopic(req.topic) {
		return nil, http.StatusNotFound, fmt.Errorf("hub.topic %q: %w", req.topic, ErrUnknownTopic)
	}
	cb, err := parseCallback(f.Get("hub.callback"), h.policy)
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("hub.callback: %w", err)
	}
	req.callback = cb
	if len(req.secret) >= MaxSecretLen {
		return nil, http.StatusBadRequest, fmt.Errorf("hub.secret is %d bytes; WebSub allows fewer than %d", len(req.secret), MaxSecretLen)
	}
	var ls int64
	if s := f.Get("hub.lease_seconds"); s != "" {
		if ls, err = strconv.ParseInt(s, 10, 64); err != nil || ls < 0 {
			return nil, http.StatusBadRequest, fmt.Errorf("hub.lease_seconds %q is not a number of seconds", s)
		}
	}
	req.lease = h.cfg.clampLease(ls)
	return req, 0, nil
}

// verify asks the callback whether it meant the request, and applies the
// request if it did.
func (h *Hub) verify(req *request) {
	defer h.wg.Done()
	defer func() {
		h.mu.Lock()
		h.pending--
		h.mu.Unlock()
	}()
	cb := req.callback.String()
	if err := h.checkIntent(h.ctx, req); err != nil {
		h.log.Info("websub hub: intent not verified", "uri", cb, "topic", req.topic, "mode", req.mode, "err", err)
		return
	}
	var err error
	if req.mode == "unsubscribe" {
		err = h.remove(h.ctx, SubscriptionID(req.topic, cb), "unsubscribed")
	} else {
		err = h.activate(h.ctx, Subscription{
			Topic: req.topic, Callback: cb, Secret: req.secret,
			Lease: int64(req.lease / time.Second), Expires: h.clock.Now().Add(req.lease),
		})
	}
	if err != nil {
		h.log.Error("websub hub: applying verified request", "uri", cb, "topic", req.topic, "mode", req.mode, "err", err)
	}
}

// checkIntent is WebSub's verification of intent: a GET on the callback
// that must answer 2xx with exactly the challenge as its body.
func (h *Hub) checkIntent(ctx context.Context, req *request) error {
	challenge := rand.Text()
	u := *req.callback
	q := u.Query()
	q.Set("hub.mode", req.mode)
	q.Set("hub.topic", req.topic)
	q.Set("hub.challenge", challenge)
	if req.mode == "subscribe" {
		q.Set("hub.lease_seconds", strconv.FormatInt(int64(req.lease/time.Second), 10))
	}
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(ctx, h.cfg.VerifyTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", req.callback, err)
	}
	resp, err := h.client.Do(hr)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", req.callback, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(len(challenge))+1))
	if err != nil {
		return fmt.Errorf("verifying %s: reading the answer: %w", req.callback, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("verifying %s: answered %s", req.callback, resp.Status)
	}
	if string(body) != challenge {
		return fmt.Errorf("verifying %s: the answer is not the challenge", req.callback)
	}
	return nil
}
