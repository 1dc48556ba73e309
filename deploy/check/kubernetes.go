package check

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	kustomize "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// Manifest files of deploy/kubernetes: kustomization.yaml names the ones
// `kubectl apply -k` applies; the PodMonitor, which needs the Prometheus
// Operator's CRDs, is applied on its own.
const (
	KustomizationFile = "kubernetes/kustomization.yaml"
	PodMonitorFile    = "kubernetes/monitoring/podmonitor.yaml"
)

// scheme knows the kinds the manifests may hold: a manifest of any other
// kind is refused, since it could not be checked.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(appsv1.AddToScheme(s))
	utilruntime.Must(policyv1.AddToScheme(s))
	utilruntime.Must(monitoringv1.AddToScheme(s))
	return s
}()

// strict decodes as the API server does for `kubectl apply
// --validate=strict`: unknown and duplicate fields are errors, and
// every value must fit its field's Go type (quantities, ports, probes).
var strict = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

// Manifests decodes every object of a manifest file strictly into its
// Kubernetes API type and checks its enumerated values.
func Manifests(file string) ([]runtime.Object, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var objs []runtime.Object
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, n, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, gvk, err := strict.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, n, err)
		}
		if err := checkEnums(obj); err != nil {
			return nil, fmt.Errorf("%s: document %d (%s): %w", file, n, gvk.Kind, err)
		}
		objs = append(objs, obj)
	}
}

// stripComments leaves the lines of a YAML document that are not
// comments, to tell an empty document from an object.
func stripComments(doc []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			out = append(out, l...)
		}
	}
	return out
}

// Kustomization decodes kustomization.yaml strictly into kustomize's own
// type.
func Kustomization(file string) (*kustomize.Kustomization, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading kustomization: %w", err)
	}
	var k kustomize.Kustomization
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if k.Kind != kustomize.KustomizationKind || k.APIVersion != kustomize.KustomizationVersion {
		return nil, fmt.Errorf("%s: %s/%s is not a %s/%s", file, k.APIVersion, k.Kind, kustomize.KustomizationVersion, kustomize.KustomizationKind)
	}
	return &k, nil
}
