package fulltier

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Moto is a private moto S3 server of one test, which the test may freeze
// (SIGSTOP) and thaw: the shared server of the full tier must never be
// frozen, since every other test of the run uses it.
type Moto struct {
	// Endpoint is "http://127.0.0.1:PORT", path-style, any credentials.
	Endpoint string
	t        testing.TB
	cmd      *exec.Cmd
}

// StartMoto starts moto_server from the full tier's venv on a free
// loopback port and waits until it accepts connections. It is thawed and
// killed when the test ends.
func StartMoto(t testing.TB) *Moto {
	t.Helper()
	return startMoto(t, nil)
}

// StartMotoAuth starts a private moto_server that checks every request's
// credentials as AWS does (moto's INITIAL_NO_AUTH_ACTION_COUNT=0): keys
// no IAM user of the server holds are refused with HTTP 403
// (InvalidClientTokenId, in an XML body even for JSON services).
func StartMotoAuth(t testing.TB) *Moto {
	t.Helper()
	return startMoto(t, []string{"INITIAL_NO_AUTH_ACTION_COUNT=0"})
}

func startMoto(t testing.TB, env []string) *Moto {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fulltier: picking a port for moto: %v", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	bin := filepath.Join(filepath.Dir(PythonPath(t)), "moto_server")
	logf, err := os.Create(filepath.Join(t.TempDir(), "moto.log"))
	if err != nil {
		t.Fatalf("fulltier: %v", err)
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(addr.Port))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("fulltier: starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	m := &Moto{Endpoint: "http://" + addr.String(), t: t, cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-exited
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("fulltier: moto_server exited at start (log %s)", logf.Name())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
			c.Close()
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("fulltier: moto_server does not accept connections after 60s (log %s)", logf.Name())
		}
	}
}

// CreateBucket creates a bucket on the server.
func (m *Moto) CreateBucket(name string) {
	m.t.Helper()
	if _, err := s3ClientAt(m.Endpoint).CreateBucket(m.t.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		m.t.Fatalf("fulltier: creating bucket %s on the private moto: %v", name, err)
	}
}

// Freeze stops the server with SIGSTOP and returns once it is stopped: the
// kernel still accepts connections and buffers requests, and nothing
// answers.
func (m *Moto) Freeze() {
	m.t.Helper()
	if err := freeze(m.cmd.Process.Pid); err != nil {
		m.t.Fatalf("fulltier: freezing moto: %v", err)
	}
}

// Thaw resumes a frozen server with SIGCONT.
func (m *Moto) Thaw() { m.signal(syscall.SIGCONT) }

func (m *Moto) signal(sig syscall.Signal) {
	m.t.Helper()
	if err := m.cmd.Process.Signal(sig); err != nil {
		m.t.Fatalf("fulltier: signalling moto: %v", err)
	}
}
