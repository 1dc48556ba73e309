package queue

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// streamConfigs are the three streams viaduct relies on. They are created
// or updated in place at every start, never deleted: an existing stream
// whose retention or storage differs makes Open fail rather than lose data.
func streamConfigs(cfg *Config) []jetstream.StreamConfig {
	// Validate has refused any other value.
	eventsCompression, _ := cfg.eventsCompression()
	return []jetstream.StreamConfig{{
		Name:        StreamChanges,
		Description: "viaduct: upstream changes waiting for a fetch worker",
		Subjects:    []string{changesPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		// A full store refuses new changes (the harvester retries) rather
		// than dropping queued ones.
		Discard:    jetstream.DiscardNew,
		Storage:    jetstream.FileStorage,
		Replicas:   cfg.Replicas,
		Duplicates: cfg.DuplicateWindow,
		MaxBytes:   -1,
		MaxMsgs:    -1,
	}, {
		Name:        StreamEvents,
		Description: "viaduct: the aggregator's change log, in order",
		Subjects:    []string{eventsPrefix + ">"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
		MaxAge:      cfg.EventsMaxAge,
		MaxBytes:    limit(cfg.EventsMaxBytes),
		MaxMsgs:     -1,
		AllowDirect: true,
		Compression: eventsCompression,
	}, {
		Name:        StreamDead,
		Description: "viaduct: messages that could not be processed, with the reason",
		Subjects:    []string{deadPrefix + ">"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
		MaxAge:      cfg.DeadMaxAge,
		MaxBytes:    limit(cfg.DeadMaxBytes),
		MaxMsgs:     -1,
		AllowDirect: true,
	}}
}

// changesConsumer is the durable pull consumer shared by every worker.
func changesConsumer(cfg *Config) jetstream.ConsumerConfig {
	c := jetstream.ConsumerConfig{
		Durable:       cfg.Consumer,
		Description:   "viaduct: fetch workers",
		FilterSubject: changesPrefix + ">",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.MaxDeliver,
		MaxAckPending: cfg.MaxAckPending,
		BackOff:       cfg.Backoff,
		Replicas:      cfg.Replicas,
	}
	if len(cfg.Backoff) > 0 {
		c.AckWait = cfg.Backoff[0]
	}
	return c
}

// limit maps the configuration's 0 (no limit) to JetStream's -1.
func limit(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// ensureStreams creates the streams and the CHANGES consumer, or checks
// the existing ones against this node's settings (see settings.go).
func (q *Queue) ensureStreams(ctx context.Context) error {
	for _, sc := range streamConfigs(&q.cfg) {
		s, err := q.ensureStream(ctx, sc)
		if err != nil {
			return err
		}
		switch sc.Name {
		case StreamChanges:
			q.changes = s
		case StreamEvents:
			q.events = s
		case StreamDead:
			q.dead = s
		}
	}
	c, err := q.ensureConsumer(ctx, changesConsumer(&q.cfg))
	if err != nil {
		return err
	}
	q.consumer = c
	return nil
}
