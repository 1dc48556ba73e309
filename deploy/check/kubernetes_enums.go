package check

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Strict decoding takes any string for a field whose Go type is a
// named string, such as podManagementPolicy: the values the API server
// would accept are known only to its validation, which is not a library.
// enums are those values, from the constants of k8s.io/api and the
// Prometheus Operator, for every named string type the manifests use.

var enums = map[reflect.Type][]string{}

// enum records the accepted values of a named string type.
func enum[T ~string](values ...T) {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	enums[reflect.TypeFor[T]()] = out
}

func init() {
	enum(appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)
	enum(appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)
	enum(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)
	enum(corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)
	enum(corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone)
	enum(corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent)
	enum(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)
	enum(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	enum(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	enum(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
	enum(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
	enum(corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack)
	enum(corev1.IPv4Protocol, corev1.IPv6Protocol)
	enum(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)
	enum(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
	enum(corev1.SeccompProfileTypeUnconfined, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeLocalhost)
	enum(corev1.URISchemeHTTP, corev1.URISchemeHTTPS)
	enum(corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError)
	enum(corev1.MountPropagationNone, corev1.MountPropagationHostToContainer, corev1.MountPropagationBidirectional)
	enum(corev1.StorageMediumDefault, corev1.StorageMediumMemory, corev1.StorageMediumHugePages)
	enum(corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways)
	enum(corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)
	enum(corev1.TolerationOpExists, corev1.TolerationOpEqual)
	enum(corev1.DoNotSchedule, corev1.ScheduleAnyway)
	enum(corev1.SecretTypeOpaque, corev1.SecretTypeServiceAccountToken, corev1.SecretTypeDockercfg,
		corev1.SecretTypeDockerConfigJson, corev1.SecretTypeBasicAuth, corev1.SecretTypeSSHAuth,
		corev1.SecretTypeTLS, corev1.SecretTypeBootstrapToken)
	enum(metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist)
	enum(policyv1.IfHealthyBudget, policyv1.AlwaysAllow)
	// The operator's CRD takes either case.
	enum[monitoringv1.Scheme]("http", "https", "HTTP", "HTTPS")
}

// freeForm are named string types whose values are not a fixed set,
// each with what checks a value (nil: any string).
var freeForm = map[reflect.Type]func(string) error{
	reflect.TypeFor[corev1.ResourceName](): nil, // extended resources are names of the cluster's own
	reflect.TypeFor[corev1.Capability](): func(s string) error {
		if s != strings.ToUpper(s) {
			return errors.New("capabilities are upper case (ALL, NET_BIND_SERVICE)")
		}
		return nil
	},
	reflect.TypeFor[monitoringv1.Duration]():  func(s string) error { _, err := model.ParseDuration(s); return err },
	reflect.TypeFor[monitoringv1.LabelName](): nil,
}

// checkEnums walks a decoded object and refuses a value of a named
// string type that is not one of its accepted values, and a named string
// type the check knows nothing of, so that a field added to a manifest
// is checked rather than waved through.
func checkEnums(obj runtime.Object) error {
	var errs []error
	walk(reflect.ValueOf(obj), "", &errs)
	return errors.Join(errs...)
}

func walk(v reflect.Value, at string, errs *[]error) {
	if v.Type() == reflect.TypeFor[resource.Quantity]() {
		return // a quantity was parsed as it was decoded; its Format is derived
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), at, errs)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			switch {
			case f.Anonymous && name == "":
				walk(v.Field(i), at, errs)
			case name != "-":
				walk(v.Field(i), at+"."+name, errs)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i), fmt.Sprintf("%s[%d]", at, i), errs)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			walk(k, at+" key", errs)
			walk(v.MapIndex(k), fmt.Sprintf("%s[%v]", at, k), errs)
		}
	case reflect.String:
		checkString(v, at, errs)
	}
}

func checkString(v reflect.Value, at string, errs *[]error) {
	t, s := v.Type(), v.String()
	if t.PkgPath() == "" || s == "" {
		return
	}
	if values, ok := enums[t]; ok {
		if !slices.Contains(values, s) {
			*errs = append(*errs, fmt.Errorf("%s: %q is not a %s (%s)", strings.TrimPrefix(at, "."), s, t.Name(), strings.Join(values, ", ")))
		}
		return
	}
	if check, ok := freeForm[t]; ok {
		if check == nil {
			return
		}
		if err := check(s); err != nil {
			*errs = append(*errs, fmt.Errorf("%s: %q: %w", strings.TrimPrefix(at, "."), s, err))
		}
		return
	}
	*errs = append(*errs, fmt.Errorf("%s: %q is a %s.%s, whose values this check does not know: add them to enums or freeForm", strings.TrimPrefix(at, "."), s, t.PkgPath(), t.Name()))
}
