package queue

// StopServer shuts the embedded server down under a live Queue, as a
// crashed or killed NATS would go away.
func StopServer(q *Queue) {
	q.srv.Shutdown()
	q.srv.WaitForShutdown()
}
