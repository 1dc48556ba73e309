package deploy

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kubeSetup is deploy/kubernetes read: its objects by kind and name, and
// the viaduct configuration of its ConfigMap.
type kubeSetup struct {
	objects map[string]map[string]k8sObject // kind, name
	sts     k8sStatefulSet
	pod     k8sPod
	ctr     k8sContainer
	cfg     configFile
}

func loadKube(t *testing.T) kubeSetup {
	t.Helper()
	type kustomization struct {
		Resources []string `yaml:"resources"`
		Images    []struct {
			Name string `yaml:"name"`
		} `yaml:"images"`
	}
	kz := decodeYAML[kustomization](t, "kubernetes/kustomization.yaml", false)[0]
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var manifests []string
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			manifests = append(manifests, filepath.Base(f))
		}
	}
	sameSet(t, "kustomization.yaml resources against the manifests beside it", kz.Resources, manifests)

	k := kubeSetup{objects: map[string]map[string]k8sObject{}}
	for _, f := range kz.Resources {
		for _, o := range readManifests(t, filepath.Join("kubernetes", f)) {
			if k.objects[o.Kind] == nil {
				k.objects[o.Kind] = map[string]k8sObject{}
			}
			if _, dup := k.objects[o.Kind][o.Metadata.Name]; dup {
				t.Errorf("%s %s is defined twice", o.Kind, o.Metadata.Name)
			}
			k.objects[o.Kind][o.Metadata.Name] = o
		}
	}
	sts := k.objects["StatefulSet"]["viaduct"]
	if sts.Kind == "" {
		t.Fatal("no StatefulSet viaduct")
	}
	sts.as(t, &k.sts)
	k.pod = k.sts.Spec.Template.Spec
	if len(k.pod.Containers) != 1 {
		t.Fatalf("StatefulSet viaduct: %d containers, want 1", len(k.pod.Containers))
	}
	k.ctr = k.pod.Containers[0]
	var images []string
	for _, im := range kz.Images {
		images = append(images, im.Name)
	}
	if !slices.Contains(images, k.ctr.Image) {
		t.Errorf("container image %q is not one kustomization.yaml sets (%q)", k.ctr.Image, images)
	}
	k.cfg = k.config(t)
	return k
}

// config finds the configuration file the container is given, in the
// ConfigMap mounted where --config points, and checks it.
func (k kubeSetup) config(t *testing.T) configFile {
	t.Helper()
	p, ok := flag(k.ctr.Args, "--config")
	if !ok {
		t.Fatalf("container args %q: no --config", k.ctr.Args)
	}
	vol := k.mountedAt(t, path.Dir(p))
	for _, v := range k.pod.Volumes {
		if v.Name != vol || v.ConfigMap == nil {
			continue
		}
		cm, ok := k.objects["ConfigMap"][v.ConfigMap.Name]
		if !ok {
			t.Fatalf("volume %s: no ConfigMap %s", vol, v.ConfigMap.Name)
		}
		var data k8sConfigMap
		cm.as(t, &data)
		text, ok := data.Data[path.Base(p)]
		if !ok {
			t.Fatalf("ConfigMap %s has no key %s (for --config %s)", v.ConfigMap.Name, path.Base(p), p)
		}
		what := "ConfigMap " + v.ConfigMap.Name + " key " + path.Base(p)
		return configFile{what, checkViaductConfig(t, what, []byte(text), k.env(t))}
	}
	t.Fatalf("--config %s: volume %s is not a ConfigMap", p, vol)
	return configFile{}
}

// env is the container's environment: its env values and the keys of the
// Secrets it takes whole.
func (k kubeSetup) env(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range k.ctr.EnvFrom {
		if e.SecretRef == nil {
			continue
		}
		o, ok := k.objects["Secret"][e.SecretRef.Name]
		if !ok {
			t.Fatalf("envFrom Secret %s is not defined", e.SecretRef.Name)
		}
		var s k8sSecret
		o.as(t, &s)
		for key, v := range s.StringData {
			env[key] = v
		}
		for key := range s.Data {
			env[key] = "from-the-secret"
		}
	}
	for _, e := range k.ctr.Env {
		env[e.Name] = e.Value
	}
	return env
}

// mountedAt is the name of the volume the container mounts at dir.
func (k kubeSetup) mountedAt(t *testing.T, dir string) string {
	t.Helper()
	for _, m := range k.ctr.VolumeMounts {
		if m.MountPath == dir {
			return m.Name
		}
	}
	t.Fatalf("container mounts nothing at %s", dir)
	return ""
}

// port is the containerPort of a port given by name or number.
func (k kubeSetup) port(t *testing.T, p string) int {
	t.Helper()
	for _, cp := range k.ctr.Ports {
		if cp.Name == p || strconv.Itoa(cp.ContainerPort) == p {
			return cp.ContainerPort
		}
	}
	t.Fatalf("container has no port %q", p)
	return 0
}

// probe is a health path the probes or the proxy ask for, and the port.
type probe struct {
	what string
	port int
	path string
}

func (k kubeSetup) probes(t *testing.T) []probe {
	t.Helper()
	var out []probe
	for what, p := range map[string]*k8sProbe{"livenessProbe": k.ctr.LivenessProbe, "readinessProbe": k.ctr.ReadinessProbe, "startupProbe": k.ctr.StartupProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("container has no HTTP %s", what)
			continue
		}
		out = append(out, probe{what, k.port(t, p.HTTPGet.Port), p.HTTPGet.Path})
	}
	return out
}

func TestKubernetesWorkload(t *testing.T) {
	k := loadKube(t)
	tmpl := k.sts.Spec.Template.Metadata.Labels
	for key, v := range k.sts.Spec.Selector.MatchLabels {
		if tmpl[key] != v {
			t.Errorf("StatefulSet selector %s=%s does not select its pods (%v)", key, v, tmpl)
		}
	}
	for kind, objs := range k.objects {
		for name, o := range objs {
			if o.Metadata.Labels["app.kubernetes.io/name"] != "viaduct" {
				t.Errorf("%s %s: no label app.kubernetes.io/name=viaduct", kind, name)
			}
		}
	}
	_, listen := hostPort(t, "listen", k.cfg.Listen)
	_, admin := hostPort(t, "admin.listen", k.cfg.Admin.Listen)
	if got := k.port(t, "http"); got != listen {
		t.Errorf("container port http %d; %s listens on %d", got, k.cfg.file, listen)
	}
	if got := k.port(t, "admin"); got != admin {
		t.Errorf("container port admin %d; %s has its admin listener on %d", got, k.cfg.file, admin)
	}
	// The probes ask the admin listener, which answers them without a
	// token; TestMetricsExist checks that the paths answer.
	for _, p := range k.probes(t) {
		if p.port != admin {
			t.Errorf("%s asks port %d; %s has its admin listener on %d", p.what, p.port, k.cfg.file, admin)
		}
	}

	var claims []string
	for _, c := range k.sts.Spec.VolumeClaimTemplates {
		claims = append(claims, c.Metadata.Name)
	}
	if vol := k.mountedAt(t, k.cfg.DataDir); !slices.Contains(claims, vol) {
		t.Errorf("data_dir %s is volume %s, not one of the volumeClaimTemplates %q", k.cfg.DataDir, vol, claims)
	}
	// The root file system is read-only: whatever the node writes outside
	// data_dir (Dump packages are built in the system's temporary
	// directory) needs a volume.
	if k.cfg.Republish.Dumps.TempDir == "" {
		vol := k.mountedAt(t, os.TempDir())
		if !slices.ContainsFunc(k.pod.Volumes, func(v k8sVolume) bool { return v.Name == vol && v.EmptyDir != nil }) {
			t.Errorf("%s is not an emptyDir", os.TempDir())
		}
	}
}

// TestKubernetesPodMonitor checks the Prometheus Operator's scrape of
// the pods: the admin port, /metrics, the token from the Secret.
func TestKubernetesPodMonitor(t *testing.T) {
	k := loadKube(t)
	const file = "kubernetes/monitoring/podmonitor.yaml"
	objs := readManifests(t, file)
	if len(objs) != 1 || objs[0].Kind != "PodMonitor" {
		t.Fatalf("%s: want one PodMonitor", file)
	}
	var pm struct {
		Spec struct {
			JobLabel string `yaml:"jobLabel"`
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Endpoints []struct {
				Port          string `yaml:"port"`
				Path          string `yaml:"path"`
				Authorization struct {
					Credentials struct {
						Name string `yaml:"name"`
						Key  string `yaml:"key"`
					} `yaml:"credentials"`
				} `yaml:"authorization"`
			} `yaml:"podMetricsEndpoints"`
		} `yaml:"spec"`
	}
	objs[0].as(t, &pm)
	tmpl := k.sts.Spec.Template.Metadata.Labels
	for key, v := range pm.Spec.Selector.MatchLabels {
		if tmpl[key] != v {
			t.Errorf("%s: selector %s=%s selects no viaduct pod", file, key, v)
		}
	}
	// The alert rules select job="viaduct".
	if tmpl[pm.Spec.JobLabel] != "viaduct" {
		t.Errorf("%s: jobLabel %q: the job would not be \"viaduct\"", file, pm.Spec.JobLabel)
	}
	_, admin := hostPort(t, "admin.listen", k.cfg.Admin.Listen)
	if len(pm.Spec.Endpoints) != 1 {
		t.Fatalf("%s: %d endpoints, want 1", file, len(pm.Spec.Endpoints))
	}
	ep := pm.Spec.Endpoints[0]
	if k.port(t, ep.Port) != admin || ep.Path != "/metrics" {
		t.Errorf("%s: scrapes %s%s; /metrics is on the admin listener, port %d", file, ep.Port, ep.Path, admin)
	}
	cred := ep.Authorization.Credentials
	if _, ok := k.env(t)[cred.Key]; !ok || cred.Key != "VIADUCT_ADMIN_TOKEN" || cred.Name != k.secretName(t) {
		t.Errorf("%s: token from Secret %s key %s; the pods' is Secret %s key VIADUCT_ADMIN_TOKEN", file, cred.Name, cred.Key, k.secretName(t))
	}
}

// secretName is the Secret the container takes its environment from.
func (k kubeSetup) secretName(t *testing.T) string {
	t.Helper()
	for _, e := range k.ctr.EnvFrom {
		if e.SecretRef != nil {
			return e.SecretRef.Name
		}
	}
	t.Fatal("the container takes no Secret")
	return ""
}

// TestKubernetesGracePeriod checks that a pod told to stop has the time
// its configuration asks for: not ready for health.shutdown_grace, then
// fetch.drain_timeout to drain, then the servers' own shutdown.
func TestKubernetesGracePeriod(t *testing.T) {
	k := loadKube(t)
	need := k.cfg.Health.ShutdownGrace + k.cfg.Fetch.DrainTimeout + 10*time.Second
	if got := time.Duration(k.pod.TerminationGracePeriodSeconds) * time.Second; got < need {
		t.Errorf("terminationGracePeriodSeconds %v; %s needs %v to stop cleanly", got, k.cfg.file, need)
	}
}

func TestKubernetesServices(t *testing.T) {
	k := loadKube(t)
	tmpl := k.sts.Spec.Template.Metadata.Labels
	headless := false
	for name, o := range k.objects["Service"] {
		var s k8sService
		o.as(t, &s)
		for key, v := range s.Spec.Selector {
			if tmpl[key] != v {
				t.Errorf("Service %s: selector %s=%s selects no viaduct pod", name, key, v)
			}
		}
		for _, p := range s.Spec.Ports {
			k.port(t, p.TargetPort)
		}
		if name == k.sts.Spec.ServiceName {
			headless = s.Spec.ClusterIP == "None"
		}
	}
	if !headless {
		t.Errorf("StatefulSet serviceName %q is not a headless Service", k.sts.Spec.ServiceName)
	}
}

func TestKubernetesSecurity(t *testing.T) {
	k := loadKube(t)
	sc := k.pod.SecurityContext
	if !sc.RunAsNonRoot || sc.RunAsUser == 0 {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and a non-zero runAsUser", sc)
	}
	if uid := imageUser(t); sc.RunAsUser != uid || sc.FSGroup != uid {
		t.Errorf("pod runs as %d (fsGroup %d); the image's user is %d", sc.RunAsUser, sc.FSGroup, uid)
	}
	csc := k.ctr.SecurityContext
	if csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation || !csc.ReadOnlyRootFilesystem || !slices.Equal(csc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("container securityContext %+v: want no privilege escalation, a read-only root and every capability dropped", csc)
	}
	r := k.ctr.Resources
	if r.Requests["cpu"] == "" || r.Requests["memory"] == "" || r.Limits["memory"] == "" {
		t.Errorf("resources %+v: want cpu and memory requests and a memory limit", r)
	}
	limit := quantity(t, r.Limits["memory"])
	for _, e := range k.ctr.Env {
		if e.Name == "GOMEMLIMIT" && quantity(t, strings.TrimSuffix(e.Value, "B")) >= limit {
			t.Errorf("GOMEMLIMIT %s is not below the memory limit %s", e.Value, r.Limits["memory"])
		}
	}
}

// quantity reads the memory quantities the manifests use (Mi, Gi).
func quantity(t *testing.T, q string) int64 {
	t.Helper()
	for suffix, mult := range map[string]int64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30} {
		if n, ok := strings.CutSuffix(q, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatalf("quantity %q: %v", q, err)
			}
			return v * mult
		}
	}
	t.Fatalf("quantity %q: not in Ki, Mi or Gi", q)
	return 0
}

func TestKubernetesCredentials(t *testing.T) {
	k := loadKube(t)
	keys := map[string]string{}
	var secret string
	for _, e := range k.ctr.EnvFrom {
		if e.SecretRef == nil {
			continue
		}
		secret = e.SecretRef.Name
		o, ok := k.objects["Secret"][secret]
		if !ok {
			t.Fatalf("envFrom Secret %s is not defined", secret)
		}
		var s k8sSecret
		o.as(t, &s)
		for key, v := range s.StringData {
			keys[key] = v
		}
		for key := range s.Data {
			keys[key] = "(data)"
		}
	}
	if k.cfg.Blobs.Kind == "s3" && k.cfg.Blobs.S3.AccessKey == "" {
		for _, key := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
			if _, ok := keys[key]; !ok {
				t.Errorf("blobs.s3 reads %s from the environment; Secret %q does not hold it", key, secret)
			}
		}
	}
	for key, v := range keys {
		if strings.Contains(strings.ToUpper(key), "SECRET") && v != "REPLACE-ME" {
			t.Errorf("Secret %s: %s holds a value; ship a placeholder", secret, key)
		}
	}

	// MinIO's chart makes viaduct's user from the same Secret.
	type bucket struct {
		Name string `yaml:"name"`
	}
	type minioValues struct {
		Buckets []bucket `yaml:"buckets"`
		Users   []struct {
			AccessKey         string `yaml:"accessKey"`
			ExistingSecret    string `yaml:"existingSecret"`
			ExistingSecretKey string `yaml:"existingSecretKey"`
		} `yaml:"users"`
	}
	const minioFile = "kubernetes/helm/minio-values.yaml"
	mv := decodeYAML[minioValues](t, minioFile, false)[0]
	if !slices.Contains(mv.Buckets, bucket{k.cfg.Blobs.S3.Bucket}) {
		t.Errorf("%s does not create bucket %s", minioFile, k.cfg.Blobs.S3.Bucket)
	}
	if len(mv.Users) != 1 || mv.Users[0].AccessKey != keys["AWS_ACCESS_KEY_ID"] || mv.Users[0].ExistingSecret != secret || mv.Users[0].ExistingSecretKey != "AWS_SECRET_ACCESS_KEY" {
		t.Errorf("%s users %+v: want viaduct's user, keys from Secret %s", minioFile, mv.Users, secret)
	}
}

// TestKubernetesHelmReleases checks that the configuration reaches NATS
// and MinIO at the Services their charts make for the release names the
// values files install them as.
func TestKubernetesHelmReleases(t *testing.T) {
	k := loadKube(t)
	release := func(file string) string {
		m := regexp.MustCompile(`helm install (\S+) \S+ -f deploy/` + regexp.QuoteMeta(file)).FindStringSubmatch(string(readFile(t, file)))
		if m == nil {
			t.Fatalf("%s: no helm install line naming the release", file)
		}
		return m[1]
	}
	const natsFile, minioFile = "kubernetes/helm/nats-values.yaml", "kubernetes/helm/minio-values.yaml"
	// The charts' Services listen on NATS's and MinIO's default ports.
	for h, p := range natsURLs(t, k.cfg.Queue.URL) {
		if r := release(natsFile); h != r || p != 4222 {
			t.Errorf("%s: queue.url names %s:%d; the NATS release %s serves %s:4222", k.cfg.file, h, p, r, r)
		}
	}
	if h, p := hostPort(t, "blobs.s3.endpoint", k.cfg.Blobs.S3.Endpoint); h != release(minioFile) || p != 9000 {
		t.Errorf("%s: blobs.s3.endpoint %s; the MinIO release serves %s:9000", k.cfg.file, k.cfg.Blobs.S3.Endpoint, release(minioFile))
	}
	type natsValues struct {
		Config struct {
			Cluster struct {
				Enabled  bool `yaml:"enabled"`
				Replicas int  `yaml:"replicas"`
			} `yaml:"cluster"`
			JetStream struct {
				Enabled bool `yaml:"enabled"`
			} `yaml:"jetstream"`
		} `yaml:"config"`
	}
	nv := decodeYAML[natsValues](t, natsFile, false)[0]
	if !nv.Config.Cluster.Enabled || !nv.Config.JetStream.Enabled || nv.Config.Cluster.Replicas < k.cfg.Queue.Replicas {
		t.Errorf("%s: %+v; queue.replicas %d needs a JetStream cluster of as many servers", natsFile, nv.Config, k.cfg.Queue.Replicas)
	}
}
