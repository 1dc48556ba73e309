package republish

import (
	"net/http"
	"strings"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/websub"
)

// A collection's change notifications are published on the topic
// <base>/<collection>/notifications. The Capability List names it with
// capability="change-notification" and an rs:ln rel="hub" to the hub, and
// a HEAD or GET on it answers the Link header WebSub discovery reads.

// HubPath is where viaduct's own hub is mounted below the base URL.
const HubPath = "/hub"

// notifyOn reports whether change notifications are advertised.
func (s *Server) notifyOn() bool { return s.cfg.Notify.Enabled }

// TopicURL is the change-notification topic of collection c.
func (s *Server) TopicURL(c string) string { return s.url("/" + c + "/notifications") }

// HubURL is the hub subscribers of the topics are sent to: the external
// hub when one is configured, else viaduct's own.
func (s *Server) HubURL() string {
	switch {
	case s.cfg.Notify.ExternalHub != "":
		return s.cfg.Notify.ExternalHub
	case s.cfg.Notify.Hub.URL != "":
		return s.cfg.Notify.Hub.URL
	}
	return s.url(HubPath)
}

// Topics maps each collection's name to its topic, for the hub to accept
// subscriptions to; empty when notifications are off.
func (s *Server) Topics() map[string]string {
	out := map[string]string{}
	if !s.notifyOn() {
		return out
	}
	for _, c := range s.collections() {
		out[c.Name] = s.TopicURL(c.Name)
	}
	return out
}

// TopicCollection is the name of the collection whose topic is topic;
// empty when none is.
func (s *Server) TopicCollection(topic string) string {
	for _, c := range s.collections() {
		if s.TopicURL(c.Name) == topic {
			return c.Name
		}
	}
	return ""
}

// NotifyConfig is the notification configuration with its defaults.
func (s *Server) NotifyConfig() NotifyConfig { return s.cfg.Notify.withDefaults() }

// notificationCapability is the Capability List's entry for the topic.
func (s *Server) notificationCapability(c *Collection) resourcesync.Entry {
	return resourcesync.Entry{
		Loc:   s.TopicURL(c.Name),
		MD:    &resourcesync.MD{Capability: resourcesync.CapChangeNotification},
		Links: []resourcesync.Link{{Rel: "hub", Href: s.HubURL()}},
	}
}

// serveTopic answers HEAD and GET on a collection's topic.
func (s *Server) serveTopic(w http.ResponseWriter, r *http.Request, c *Collection) {
	s.m.requests.WithLabelValues("topic", "200").Inc()
	websub.TopicHandler(s.TopicURL(c.Name), s.HubURL()).ServeHTTP(w, r)
}

// isTopic reports whether rest (the path after the collection) is the
// topic and notifications are on.
func (s *Server) isTopic(rest string) bool {
	return s.notifyOn() && strings.TrimSuffix(rest, "/") == "notifications"
}
