package miniotest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
)

// TestServerDiesWithItsParent: a process that started a server and is
// then killed with SIGKILL, running no cleanup, takes the server with it.
// The test runs itself as that process.
func TestServerDiesWithItsParent(t *testing.T) {
	if dir := os.Getenv("MINIOTEST_PARENT_DIR"); dir != "" {
		srv, err := Launch([]string{binaryOrSkip(t)}, dir)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("endpoint %s\n", srv.Endpoint)
		select {} // until killed
	}
	binaryOrSkip(t)
	parent := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithItsParent$")
	parent.Env = append(os.Environ(), "MINIOTEST_PARENT_DIR="+t.TempDir())
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Wait()
	defer parent.Process.Kill()
	endpoint := ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "endpoint "); ok {
			endpoint = e
			break
		}
	}
	if endpoint == "" {
		t.Fatalf("the parent process never said where its server listens (%v)", sc.Err())
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	testutil.Eventually(t, 10*time.Second, "the server at "+endpoint+" to stop when the process that started it was killed", func() bool {
		c, err := net.DialTimeout("tcp", endpoint, time.Second)
		if err != nil {
			return true // nothing listens there any more
		}
		c.Close()
		return false
	})
}
