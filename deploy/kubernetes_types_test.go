package deploy

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The parts of the Kubernetes objects the tests check, named as in the
// manifests.

type k8sMeta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type k8sObject struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   k8sMeta `yaml:"metadata"`
	// raw is the whole document, to decode by kind.
	raw yaml.Node
}

type k8sConfigMap struct {
	Data map[string]string `yaml:"data"`
}

type k8sSecret struct {
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
}

type k8sService struct {
	Spec struct {
		ClusterIP string            `yaml:"clusterIP"`
		Selector  map[string]string `yaml:"selector"`
		Ports     []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type k8sStatefulSet struct {
	Spec struct {
		ServiceName string `yaml:"serviceName"`
		Replicas    int    `yaml:"replicas"`
		Selector    struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata k8sMeta `yaml:"metadata"`
			Spec     k8sPod  `yaml:"spec"`
		} `yaml:"template"`
		VolumeClaimTemplates []struct {
			Metadata k8sMeta `yaml:"metadata"`
		} `yaml:"volumeClaimTemplates"`
	} `yaml:"spec"`
}

type k8sPod struct {
	TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               struct {
		RunAsNonRoot bool `yaml:"runAsNonRoot"`
		RunAsUser    int  `yaml:"runAsUser"`
		FSGroup      int  `yaml:"fsGroup"`
	} `yaml:"securityContext"`
	Containers []k8sContainer `yaml:"containers"`
	Volumes    []k8sVolume    `yaml:"volumes"`
}

type k8sVolume struct {
	Name      string `yaml:"name"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
	EmptyDir *struct{} `yaml:"emptyDir"`
}

type k8sContainer struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	EnvFrom []struct {
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Env []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	LivenessProbe   *k8sProbe `yaml:"livenessProbe"`
	ReadinessProbe  *k8sProbe `yaml:"readinessProbe"`
	StartupProbe    *k8sProbe `yaml:"startupProbe"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"` // a port's name or number
	} `yaml:"httpGet"`
}

// readManifests reads every object of a multi-document manifest file.
func readManifests(t *testing.T, file string) []k8sObject {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, file)))
	var out []k8sObject
	for {
		var o k8sObject
		err := dec.Decode(&o.raw)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := o.raw.Decode(&o); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Fatalf("%s: an object without apiVersion, kind or name: %+v", file, o)
		}
		out = append(out, o)
	}
}

// as decodes the object into the type of its kind.
func (o k8sObject) as(t *testing.T, v any) {
	t.Helper()
	if err := o.raw.Decode(v); err != nil {
		t.Fatalf("%s %s: %v", o.Kind, o.Metadata.Name, err)
	}
}
