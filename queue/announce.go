package queue

// announce logs where NATS is and which server answers, once the queue is
// open: with the embedded server on a random port (the default), this line
// is the only way an operator finds the address for the nats CLI or for
// another node.
func (q *Queue) announce() {
	url, embedded := q.nc.ConnectedUrlRedacted(), q.srv != nil
	if embedded {
		url = q.srv.ClientURL()
	}
	q.log.Info("nats ready", "url", url, "embedded", embedded,
		"server_version", q.nc.ConnectedServerVersion(), "server_name", q.nc.ConnectedServerName())
}
