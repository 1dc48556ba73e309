package harvester

import (
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/websub"
)

// PushConfig is how the harvester receives Sources' change notifications.
// Its fields sit directly in the harvest section of the configuration.
type PushConfig struct {
	// Notify is the default of SourceConfig.Notify: subscribe to a
	// Source's change notifications when its Capability List offers a
	// channel. Default true.
	Notify bool `yaml:"notify"`
	// PushSchedule replaces a Source's poll schedule while its
	// subscription is active and its notifications arrive in sequence:
	// polling stays on as a safety net, only slower. Default "@every 1h".
	PushSchedule string `yaml:"push_schedule"`
	// QuietWindow is how long a subscribed Source may send no notification
	// before its Change List is polled, in case its hub stopped
	// delivering. Zero: never. Default 15m.
	QuietWindow time.Duration `yaml:"quiet_window"`
	// Subscriber is how viaduct subscribes to hubs. Its callback_base
	// defaults to the node's public URL + "/websub/callback/".
	Subscriber websub.SubscriberConfig `yaml:"subscriber"`
}

func pushDefaults() PushConfig {
	return PushConfig{Notify: true, PushSchedule: "@every 1h", QuietWindow: 15 * time.Minute}
}

func (c *PushConfig) validate() error {
	if _, err := cronParser.Parse(c.PushSchedule); err != nil {
		return fmt.Errorf("push_schedule: %q: %w", c.PushSchedule, err)
	}
	if c.QuietWindow < 0 {
		return errors.New("quiet_window: must not be negative")
	}
	return nil
}

// notifies reports whether s is to be subscribed to, given c.
func (c *PushConfig) notifies(s *source) bool {
	if s.Notify != nil {
		return *s.Notify
	}
	return c.Notify
}
