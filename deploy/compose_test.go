package deploy

import (
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// composeSetup is deploy/compose read and sorted by role.
type composeSetup struct {
	file     composeFile
	viaducts []string // services running viaduct serve
	nats     []string
	minio    string
	sim      string
	proxy    string
	prom     string
	grafana  string
}

func loadCompose(t *testing.T) composeSetup {
	t.Helper()
	docs := decodeYAML[composeFile](t, "compose/compose.yaml", false)
	if len(docs) != 1 {
		t.Fatalf("compose.yaml: %d documents, want 1", len(docs))
	}
	c := composeSetup{file: docs[0]}
	one := func(role string, p *string, name string) {
		if *p != "" {
			t.Fatalf("compose.yaml: two %s services, %s and %s", role, *p, name)
		}
		*p = name
	}
	for name, s := range c.file.Services {
		switch {
		case len(s.Command) > 0 && s.Command[0] == "serve":
			c.viaducts = append(c.viaducts, name)
		case len(s.Command) > 0 && s.Command[0] == "sim":
			one("sim", &c.sim, name)
		case strings.HasPrefix(s.Image, "nats:"):
			c.nats = append(c.nats, name)
		case s.Build.Context == "./minio":
			one("minio", &c.minio, name)
		case strings.HasPrefix(s.Image, "caddy:"):
			one("proxy", &c.proxy, name)
		case strings.HasPrefix(s.Image, "prom/prometheus:"):
			one("prometheus", &c.prom, name)
		case strings.HasPrefix(s.Image, "grafana/grafana:"):
			one("grafana", &c.grafana, name)
		default:
			t.Errorf("compose.yaml: service %s has no role the tests know", name)
		}
	}
	if len(c.viaducts) < 2 || len(c.nats) != 3 || c.minio == "" || c.sim == "" || c.proxy == "" || c.prom == "" || c.grafana == "" {
		t.Fatalf("compose.yaml: want two or more viaduct nodes, three NATS servers, MinIO, the sim, a proxy, Prometheus and Grafana; have %+v", c)
	}
	return c
}

func (c composeSetup) svc(name string) composeService { return c.file.Services[name] }

// boundFile is the file of deploy/compose bind-mounted at target in a
// service, failing the test when nothing is.
func (c composeSetup) boundFile(t *testing.T, svc, target string) string {
	t.Helper()
	m, ok := c.svc(svc).mounts(t, svc)[target]
	if !ok || !m.bind {
		t.Fatalf("service %s: nothing bind-mounted at %s", svc, target)
	}
	return filepath.Join("compose", filepath.FromSlash(m.source))
}

// viaductConfig checks the configuration a viaduct service runs with and
// returns it.
func (c composeSetup) viaductConfig(t *testing.T, svc string) configFile {
	t.Helper()
	p, ok := flag(c.svc(svc).Command, "--config")
	if !ok {
		t.Fatalf("service %s: no --config in %q", svc, c.svc(svc).Command)
	}
	file := c.boundFile(t, svc, p)
	env := map[string]string{}
	for k, v := range c.svc(svc).Environment {
		env[k] = interpolate(v)
	}
	return configFile{file, checkViaductConfig(t, file, readFile(t, file), env)}
}

// composeVar is a compose variable: ${NAME}, ${NAME:-default},
// ${NAME:?message}.
var composeVar = regexp.MustCompile(`\$\{(\w+)(?::?([-?])([^}]*))?\}`)

// interpolate gives a compose value the value compose would with none of
// its variables set: a variable's default, or a stand-in for one the
// operator must set.
func interpolate(v string) string {
	return composeVar.ReplaceAllStringFunc(v, func(m string) string {
		sub := composeVar.FindStringSubmatch(m)
		if sub[2] == "-" {
			return sub[3]
		}
		return "set-by-the-operator-" + strings.ToLower(sub[1])
	})
}

func TestInterpolate(t *testing.T) {
	for in, want := range map[string]string{
		"${MINIO_ROOT_USER:-viaduct}": "viaduct",
		"${A:?set A, see README.md}":  "set-by-the-operator-a",
		"x-${B}-${C-d}":               "x-set-by-the-operator-b-d",
		"plain":                       "plain",
	} {
		if got := interpolate(in); got != want {
			t.Errorf("interpolate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestComposeFilesAndVolumes(t *testing.T) {
	c := loadCompose(t)
	used := map[string]bool{}
	for name, s := range c.file.Services {
		if s.Image == "" && s.Build.Context == "" {
			t.Errorf("service %s: neither image nor build", name)
		}
		if s.Build.Context != "" {
			df := s.Build.Dockerfile
			if df == "" {
				df = "Dockerfile"
			}
			p := filepath.Join("compose", filepath.FromSlash(s.Build.Context), filepath.FromSlash(df))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("service %s: build: %v", name, err)
			}
		}
		for _, m := range s.mounts(t, name) {
			if m.bind {
				if _, err := os.Stat(filepath.Join("compose", filepath.FromSlash(m.source))); err != nil {
					t.Errorf("service %s: bind mount: %v", name, err)
				}
				if !m.readOnly {
					t.Errorf("service %s: %s is bind-mounted writable; deploy's files are configuration", name, m.source)
				}
				continue
			}
			if _, ok := c.file.Volumes[m.source]; !ok {
				t.Errorf("service %s: volume %s is not declared under volumes", name, m.source)
			}
			if used[m.source] {
				t.Errorf("service %s: volume %s is shared with another service", name, m.source)
			}
			used[m.source] = true
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("service %s: port %q is published beyond loopback", name, p)
			}
		}
		for n := range s.Networks {
			if _, ok := c.file.Networks[n]; !ok {
				t.Errorf("service %s: network %s is not declared", name, n)
			}
		}
		for _, sec := range s.Secrets {
			if _, ok := c.file.Secrets[sec]; !ok {
				t.Errorf("service %s: secret %s is not declared", name, sec)
			}
		}
	}
	for v := range c.file.Volumes {
		if !used[v] {
			t.Errorf("volume %s is declared and unused", v)
		}
	}
}

func TestComposeViaductNodes(t *testing.T) {
	c := loadCompose(t)
	nats := c.natsServers(t)
	minioPort := c.minioPort(t)
	for _, name := range c.viaducts {
		s := c.svc(name)
		cfg := c.viaductConfig(t, name)
		if m, ok := s.mounts(t, name)[cfg.DataDir]; !ok || m.bind {
			t.Errorf("service %s: data_dir %s of %s is not a volume of its own", name, cfg.DataDir, cfg.file)
		}
		if got := natsURLs(t, cfg.Queue.URL); len(got) != len(nats) {
			t.Errorf("%s: queue.url names %d servers, compose runs %d", cfg.file, len(got), len(nats))
		} else {
			for h, p := range got {
				if ns, ok := nats[h]; !ok || ns.Port != p {
					t.Errorf("%s: queue.url names %s:%d; no NATS service listens there", cfg.file, h, p)
				}
			}
		}
		// The image has no shell: the node's health check is viaduct's own,
		// on the configuration it serves with.
		hc := s.Healthcheck.Test
		hcCfg, _ := flag(hc, "--config")
		if p, _ := flag(s.Command, "--config"); len(hc) < 3 || hc[0] != "CMD" || hc[2] != "healthcheck" || hcCfg != p {
			t.Errorf("service %s: healthcheck %q is not [CMD viaduct healthcheck --config %s]", name, hc, p)
		}
		if cfg.Queue.Replicas != len(nats) {
			t.Errorf("%s: queue.replicas %d on a cluster of %d", cfg.file, cfg.Queue.Replicas, len(nats))
		}
		if cfg.Blobs.Kind != "s3" {
			t.Errorf("%s: blobs.kind %q: nodes on one queue must share their blobs (s3)", cfg.file, cfg.Blobs.Kind)
		}
		if h, p := hostPort(t, "blobs.s3.endpoint", cfg.Blobs.S3.Endpoint); h != c.minio || p != minioPort {
			t.Errorf("%s: blobs.s3.endpoint %s; MinIO is %s:%d", cfg.file, cfg.Blobs.S3.Endpoint, c.minio, minioPort)
		}
		menv := c.svc(c.minio).Environment
		if s.Environment["AWS_ACCESS_KEY_ID"] != menv["MINIO_ROOT_USER"] || s.Environment["AWS_SECRET_ACCESS_KEY"] != menv["MINIO_ROOT_PASSWORD"] {
			t.Errorf("service %s: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY %q/%q are not MinIO's %q/%q", name,
				s.Environment["AWS_ACCESS_KEY_ID"], s.Environment["AWS_SECRET_ACCESS_KEY"], menv["MINIO_ROOT_USER"], menv["MINIO_ROOT_PASSWORD"])
		}
		simListen, ok := flag(c.svc(c.sim).Command, "--listen")
		if !ok {
			t.Fatalf("service %s: no --listen", c.sim)
		}
		for _, src := range cfg.Sources {
			if h, p := urlHostPort(t, "source "+src.Name, src.URL); h+":"+strconv.Itoa(p) != simListen {
				t.Errorf("%s: source %s at %s; the sim listens on %s", cfg.file, src.Name, src.URL, simListen)
			}
		}
		if _, p := urlHostPort(t, "public_url", cfg.PublicURL); p != c.proxyPort(t) {
			t.Errorf("%s: public_url %s is not the proxy's published port %d", cfg.file, cfg.PublicURL, c.proxyPort(t))
		}
	}
}

// TestComposeSimAddress checks that the simulated Source listens on the
// fixed address compose gives it, inside its network's subnet: the locs it
// serves name the address it listens on.
func TestComposeSimAddress(t *testing.T) {
	c := loadCompose(t)
	listen, _ := flag(c.svc(c.sim).Command, "--listen")
	host, _ := hostPort(t, "sim --listen", listen)
	nets := c.svc(c.sim).Networks
	if len(nets) != 1 {
		t.Fatalf("service %s: on %d networks, want 1", c.sim, len(nets))
	}
	for n, ip := range nets {
		if ip != host {
			t.Errorf("service %s: listens on %s, its address on %s is %q", c.sim, host, n, ip)
		}
		addr, err := netip.ParseAddr(ip)
		if err != nil {
			t.Fatalf("service %s: address %q: %v", c.sim, ip, err)
		}
		cfgs := c.file.Networks[n].IPAM.Config
		if len(cfgs) != 1 {
			t.Fatalf("network %s: %d subnets, want 1", n, len(cfgs))
		}
		if p, err := netip.ParsePrefix(cfgs[0].Subnet); err != nil || !p.Contains(addr) {
			t.Errorf("network %s: subnet %q does not hold %s (%v)", n, cfgs[0].Subnet, addr, err)
		}
	}
}

// natsServers reads each NATS service's configuration with nats-server's
// own parser and checks that they form one JetStream cluster.
func (c composeSetup) natsServers(t *testing.T) map[string]*server.Options {
	t.Helper()
	out := map[string]*server.Options{}
	for _, name := range c.nats {
		s := c.svc(name)
		p, ok := flag(s.Command, "--config")
		if !ok {
			t.Fatalf("service %s: no --config in %q", name, s.Command)
		}
		file := c.boundFile(t, name, p)
		o, err := server.ProcessConfigFile(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if o.ServerName != name {
			t.Errorf("%s: server_name %q, service %s", file, o.ServerName, name)
		}
		if !o.JetStream {
			t.Errorf("%s: JetStream is off", file)
		}
		if m, ok := s.mounts(t, name)[o.StoreDir]; !ok || m.bind {
			t.Errorf("%s: store_dir %s is not a volume of service %s", file, o.StoreDir, name)
		}
		if len(s.Healthcheck.Test) == 0 || !strings.Contains(strings.Join(s.Healthcheck.Test, " "), ":"+strconv.Itoa(o.HTTPPort)+"/") {
			t.Errorf("service %s: healthcheck %q does not ask the monitoring port %d", name, s.Healthcheck.Test, o.HTTPPort)
		}
		out[name] = o
	}
	var cluster string
	for name, o := range out {
		if cluster == "" {
			cluster = o.Cluster.Name
		}
		if o.Cluster.Name == "" || o.Cluster.Name != cluster {
			t.Errorf("service %s: cluster name %q, others %q", name, o.Cluster.Name, cluster)
		}
		var routes []string
		for _, r := range o.Routes {
			routes = append(routes, r.Host)
		}
		var want []string
		for peer, po := range out {
			want = append(want, peer+":"+strconv.Itoa(po.Cluster.Port))
		}
		sameSet(t, "routes of "+name, routes, want)
	}
	return out
}

// minioPort is the port MinIO's S3 API listens on in its container.
func (c composeSetup) minioPort(t *testing.T) int {
	t.Helper()
	a, ok := flag(c.svc(c.minio).Command, "--address")
	if !ok {
		t.Fatalf("service %s: no --address in %q", c.minio, c.svc(c.minio).Command)
	}
	_, p := hostPort(t, "minio --address", a)
	return p
}

// proxyPort is the port the proxy publishes on the host, the one of
// every node's public_url.
func (c composeSetup) proxyPort(t *testing.T) int {
	t.Helper()
	ports := c.svc(c.proxy).Ports
	if len(ports) != 1 {
		t.Fatalf("service %s: %d published ports, want 1", c.proxy, len(ports))
	}
	parts := strings.Split(ports[0], ":") // 127.0.0.1:host:container
	hp, err := strconv.Atoi(parts[1])
	if err != nil || len(parts) != 3 {
		t.Fatalf("service %s: port %q is not 127.0.0.1:host:container", c.proxy, ports[0])
	}
	site := readCaddyfile(t, c.boundFile(t, c.proxy, "/etc/caddy/Caddyfile"))
	if strconv.Itoa(site.port) != parts[2] {
		t.Errorf("service %s: publishes container port %s, Caddy listens on %d", c.proxy, parts[2], site.port)
	}
	return hp
}

func TestComposeProxy(t *testing.T) {
	c := loadCompose(t)
	site := readCaddyfile(t, c.boundFile(t, c.proxy, "/etc/caddy/Caddyfile"))
	var want []string
	for _, v := range c.viaducts {
		_, p := hostPort(t, "listen", c.viaductConfig(t, v).Listen)
		want = append(want, v+":"+strconv.Itoa(p))
	}
	sameSet(t, "Caddyfile reverse_proxy upstreams", site.upstreams, want)
	if site.healthURI == "" {
		t.Error("Caddyfile: no health_uri: a stopped node would still get requests")
	}
	c.proxyPort(t)
}

// prometheusConfig is the part of prometheus.yml the tests check.
type prometheusConfig struct {
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		Authorization struct {
			CredentialsFile string `yaml:"credentials_file"`
		} `yaml:"authorization"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

func TestComposePrometheus(t *testing.T) {
	c := loadCompose(t)
	s := c.svc(c.prom)
	p, ok := flag(s.Command, "--config.file")
	if !ok {
		t.Fatalf("service %s: no --config.file", c.prom)
	}
	file := c.boundFile(t, c.prom, p)
	cfg := decodeYAML[prometheusConfig](t, file, false)[0]
	jobs := map[string][]string{}
	var tokenFile string
	for _, sc := range cfg.ScrapeConfigs {
		if sc.JobName == "viaduct" {
			tokenFile = sc.Authorization.CredentialsFile
		}
		var targets []string
		for _, st := range sc.StaticConfigs {
			targets = append(targets, st.Targets...)
		}
		jobs[sc.JobName] = targets
		if sc.JobName == "viaduct" && sc.MetricsPath != "" && sc.MetricsPath != "/metrics" {
			t.Errorf("%s: job viaduct scrapes %s, nodes serve /metrics", file, sc.MetricsPath)
		}
	}
	// /metrics is on the admin listener, behind the token every node has.
	var want []string
	for _, v := range c.viaducts {
		_, port := hostPort(t, "admin.listen", c.viaductConfig(t, v).Admin.Listen)
		want = append(want, v+":"+strconv.Itoa(port))
		token := c.svc(v).Environment["VIADUCT_ADMIN_TOKEN"]
		secret, ok := strings.CutPrefix(tokenFile, "/run/secrets/")
		v := composeVar.FindStringSubmatch(token)
		if !ok || !slices.Contains(s.Secrets, secret) || v == nil || v[0] != token || v[1] != c.file.Secrets[secret].Environment {
			t.Errorf("%s: job viaduct's credentials_file %q is not the compose secret made from the nodes' VIADUCT_ADMIN_TOKEN (%q)", file, tokenFile, token)
		}
	}
	// The alert rules select job="viaduct".
	sameSet(t, file+": job viaduct's targets", jobs["viaduct"], want)
	sameSet(t, file+": job minio's targets", jobs["minio"], []string{c.minio + ":" + strconv.Itoa(c.minioPort(t))})

	mounts := s.mounts(t, c.prom)
	if len(cfg.RuleFiles) == 0 {
		t.Errorf("%s: no rule_files", file)
	}
	for _, glob := range cfg.RuleFiles {
		m, ok := mounts[path.Dir(glob)]
		if !ok || !m.bind {
			t.Errorf("%s: rule_files %s: nothing mounted at %s", file, glob, path.Dir(glob))
			continue
		}
		matches, err := filepath.Glob(filepath.Join("compose", filepath.FromSlash(m.source), path.Base(glob)))
		if err != nil || len(matches) == 0 {
			t.Errorf("%s: rule_files %s matches no file of %s (%v)", file, glob, m.source, err)
		}
	}
}

func TestComposeGrafana(t *testing.T) {
	c := loadCompose(t)
	s := c.svc(c.grafana)
	type datasources struct {
		Datasources []struct {
			UID  string `yaml:"uid"`
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	ds := decodeYAML[datasources](t, c.boundFile(t, c.grafana, "/etc/grafana/provisioning/datasources/viaduct.yaml"), false)[0]
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" {
		t.Fatalf("grafana datasources: want one prometheus data source, have %+v", ds)
	}
	promPort := 9090 // Prometheus's default --web.listen-address
	if h, p := urlHostPort(t, "grafana data source", ds.Datasources[0].URL); h != c.prom || p != promPort {
		t.Errorf("grafana data source %s is not Prometheus (%s:%d)", ds.Datasources[0].URL, c.prom, promPort)
	}
	type providers struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	pv := decodeYAML[providers](t, c.boundFile(t, c.grafana, "/etc/grafana/provisioning/dashboards/viaduct.yaml"), false)[0]
	if len(pv.Providers) != 1 {
		t.Fatalf("grafana dashboards: %d providers, want 1", len(pv.Providers))
	}
	m, ok := s.mounts(t, c.grafana)[pv.Providers[0].Options.Path]
	if !ok || !m.bind || filepath.Clean(filepath.Join("compose", m.source)) != "grafana" {
		t.Errorf("grafana: dashboards path %s is not deploy/grafana mounted", pv.Providers[0].Options.Path)
	}
}

// TestComposeImages checks the versions compose runs against those the
// project builds and tests with.
func TestComposeImages(t *testing.T) {
	c := loadCompose(t)
	mod := string(readFile(t, "../go.mod"))
	m := regexp.MustCompile(`github.com/nats-io/nats-server/v2 v(\d+\.\d+)\.`).FindStringSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod: no nats-server")
	}
	for _, n := range c.nats {
		if img := c.svc(n).Image; !strings.HasPrefix(img, "nats:"+m[1]+".") && !strings.HasPrefix(img, "nats:"+m[1]+"-") {
			t.Errorf("service %s: image %s; the embedded server is nats-server %s", n, img, m[1])
		}
	}
	want := regexp.MustCompile(`MINIO_MODULE := (\S+)`).FindStringSubmatch(string(readFile(t, "../Makefile")))
	got := regexp.MustCompile(`ARG MINIO_MODULE=(\S+)`).FindStringSubmatch(string(readFile(t, "compose/minio/Dockerfile")))
	if want == nil || got == nil || want[1] != got[1] {
		t.Errorf("compose/minio/Dockerfile builds %v; the Makefile's S3 tests run %v", got, want)
	}
}
