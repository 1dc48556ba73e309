package check

import "testing"

func TestKubernetesManifests(t *testing.T) {
	k, err := Kustomization(path(KustomizationFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(prefixed("kubernetes/", k.Resources), PodMonitorFile) {
		objs, err := Manifests(path(f))
		if err != nil {
			t.Error(err)
			continue
		}
		if len(objs) == 0 {
			t.Errorf("%s: no objects", f)
		}
	}
}

func prefixed(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = dir + n
	}
	return out
}

func TestKubernetesRefusesBroken(t *testing.T) {
	for _, c := range []struct {
		file string
		breakage
		want string
	}{
		{"kubernetes/statefulset.yaml", breakage{"a misspelt enumerated value", "podManagementPolicy: Parallel", "podManagementPolicy: Paralel"}, `"Paralel" is not a PodManagementPolicyType`},
		{"kubernetes/statefulset.yaml", breakage{"a misspelt field", "terminationGracePeriodSeconds: 60", "terminationGracePeriodSecond: 60"}, `unknown field "spec.template.spec.terminationGracePeriodSecond"`},
		{"kubernetes/statefulset.yaml", breakage{"a field given twice", "replicas: 3", "replicas: 3\n  replicas: 2"}, `key "replicas" already set`},
		{"kubernetes/statefulset.yaml", breakage{"a quantity that is none", "memory: 1Gi", "memory: 1GB"}, "quantities must match"},
		{"kubernetes/statefulset.yaml", breakage{"a capability in lower case", "drop: [ALL]", "drop: [all]"}, "capabilities are upper case"},
		{"kubernetes/statefulset.yaml", breakage{"a field whose values the check does not know", "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 60\n      preemptionPolicy: Never"}, "PreemptionPolicy, whose values this check does not know"},
		{"kubernetes/service.yaml", breakage{"a port that is a string", "port: 80", `port: "80"`}, "port"},
		{"kubernetes/poddisruptionbudget.yaml", breakage{"a kind of another group", "apiVersion: policy/v1", "apiVersion: policy/v2"}, "policy/v2"},
		{PodMonitorFile, breakage{"a misspelt field of the operator's", "podMetricsEndpoints:", "podMetricEndpoints:"}, "podMetricEndpoints"},
		{PodMonitorFile, breakage{"a scrape interval that is no duration", "interval: 30s", "interval: 30sec"}, "30sec"},
	} {
		_, err := Manifests(broken(t, c.file, c.breakage))
		refused(t, c.breakage, err, c.want)
	}
	b := breakage{"a misspelt kustomization field", "resources:", "resource:"}
	_, err := Kustomization(broken(t, KustomizationFile, b))
	refused(t, b, err, `unknown field "resource"`)
}
