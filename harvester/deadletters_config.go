package harvester

import "errors"

// DeadLetterConfig is how a Source's dead letters come back once it
// answers again (docs/fetching.md, "Dead letters that come back").
type DeadLetterConfig struct {
	// DeadLetterRetries is how many times one change may be taken out of
	// the dead letters and queued again automatically, after passes over
	// its Source that ended well; retries on demand count too. A change
	// that has come back this many times stays for the operator. 0 turns
	// automatic retries off. Default 3: with the default retry budget
	// (about 7 minutes of deliveries) and schedule (5 minutes), a change
	// outlasts about 45 minutes of a Source that answers its lists but not
	// its bitstreams.
	DeadLetterRetries int `yaml:"dead_letter_retries"`
	// DeadLetterBatch bounds the dead letters of one Source looked at
	// after one pass; the rest wait for the next pass. Default 10,000.
	DeadLetterBatch int `yaml:"dead_letter_batch"`
}

func deadLetterDefaults() DeadLetterConfig {
	return DeadLetterConfig{DeadLetterRetries: 3, DeadLetterBatch: 10_000}
}

func (c DeadLetterConfig) validate() error {
	switch {
	case c.DeadLetterRetries < 0:
		return errors.New("dead_letter_retries: must not be negative")
	case c.DeadLetterBatch <= 0:
		return errors.New("dead_letter_batch: must be positive")
	}
	return nil
}
