package queue

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// setUpRound bounds one round of setUp. JetStream answers an API request
// within milliseconds when it has a leader; a round this long has lost its
// request to an election.
const setUpRound = 10 * time.Second

// setUp makes sure of the streams, the CHANGES consumer and the buckets.
// On a cluster that has just lost a server, a request can go unanswered
// while a stream or the meta group elects a new leader, and waiting on it
// until ctx ends would fail a node that a second request would open. So
// each round is bounded by setUpRound, and a round that timed out or found
// JetStream unavailable is tried again until ctx ends: every step only
// reads, or creates what is missing, so a round may repeat another.
func (q *Queue) setUp(ctx context.Context) error {
	for round := 1; ; round++ {
		rctx, cancel := context.WithTimeout(ctx, setUpRound)
		err := q.setUpOnce(rctx)
		cancel()
		if err == nil || ctx.Err() != nil || !unavailable(err) {
			return err
		}
		q.log.Warn("jetstream could not set up the queue now; trying again", "round", round, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

func (q *Queue) setUpOnce(ctx context.Context) error {
	if err := q.ensureStreams(ctx); err != nil {
		return err
	}
	for _, b := range []string{BucketLeases, BucketPositions, BucketHub} {
		if _, err := q.Bucket(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// unavailable: the error says JetStream could not answer now (no reply in
// time, no responder, a 503 while a leader is elected, too few servers
// online to place a stream's replicas while the cluster forms or a server
// restarts), not that it refused what was asked.
func unavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) {
		return true
	}
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.Code == http.StatusServiceUnavailable || api.ErrorCode == errCodeNoPeers)
}

// errCodeNoPeers is JetStream's error code for a stream it cannot place:
// fewer servers with JetStream are online than its replicas need.
const errCodeNoPeers jetstream.ErrorCode = 10005
