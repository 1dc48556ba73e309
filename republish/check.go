package republish

// Check runs the checks New runs on the configuration, so that a
// configuration can be checked before anything starts.
func (c Config) Check() error {
	_, err := c.withDefaults()
	return err
}
