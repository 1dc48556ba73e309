// Package admin is the operator's side of a node, served on its own
// listener (loopback by default): a JSON API over the Sources, the dead
// letters, the Dumps and the configuration, and an HTML status page that
// refreshes itself. The `viaduct admin` commands call the API.
//
// Every request but the health probes needs the admin bearer token (read
// from a file or the environment), unless the operator turned that off for
// loopback clients; a refused request is told why. The package never
// serves on the public listener, and it changes nothing itself: it asks
// the harvester, the queue and the dump builder, through the small
// interfaces declared here.
package admin
