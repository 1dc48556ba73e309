package s3

// Check runs the checks New runs on the configuration before it connects
// (endpoint, bucket name, credentials, part sizes), so that a
// configuration can be checked without reaching the server.
func (c Config) Check() error {
	_, err := c.withDefaults()
	return err
}
