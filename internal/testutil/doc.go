// Package testutil holds what the tests of several packages need alike:
// the one polling helper every test waits with, and a look at a JetStream
// stream. It imports no package of this module, so that any package's
// tests, internal or external, can use it. Only tests import it.
package testutil
