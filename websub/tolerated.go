package websub

import "github.com/viaduct-mirror/viaduct/resourcesync"

// WarnChangeListPayload is the warning for a Change Notification posted
// with capability="changelist", as the ResourceSync PuSH implementation
// (before the notification spec of 2017) posts them. The payload is
// otherwise a notification (a urlset of changes with from and until) and
// arrives on a callback the Subscriber subscribed, signed with its secret,
// so it is read as one rather than refused, which would lose its changes
// until the next poll.
const WarnChangeListPayload resourcesync.WarningKind = "notification-as-changelist"

// tolerated counts what a notification taken on subscription id needed
// tolerated, once per kind per notification, and logs each kind the first
// time a subscription needs it: a Source that always posts the same way
// writes one line, not one per notification.
func (s *Subscriber) tolerated(id string, warns []resourcesync.Warning) {
	if len(warns) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.subs[id]
	if !ok {
		return
	}
	if e.Tolerated == nil {
		e.Tolerated = map[resourcesync.WarningKind]int{}
	}
	for _, w := range warns {
		if e.Tolerated[w.Kind] == 0 {
			s.log.Warn("websub subscriber: notification read with a tolerance", "topic", e.Topic, "hub", e.Hub, "kind", string(w.Kind), "warning", w.String())
		}
		e.Tolerated[w.Kind]++
	}
}
