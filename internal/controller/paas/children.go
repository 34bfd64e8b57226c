package paas

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// Labels on every object the controller makes (Kubernetes' recommended labels).
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is the value of LabelManagedBy.
	ManagedBy = "object-storage-manager"

	// ComponentApp marks the application's pods, which the Service selects; ComponentBackup
	// the backup's, which it does not.
	ComponentApp    = "app"
	ComponentBackup = "backup"

	// legacyChecksumAnnotation is the hash of the Contract's keys that older versions put on
	// pod templates; AccessKeysAnnotation replaces it.
	legacyChecksumAnnotation = "paas.osm.dev/credentials-checksum"

	// AppContainer and BackupContainer name the containers.
	AppContainer    = "app"
	BackupContainer = "backup"

	// PortName names the application's port on the container, the Service and the Ingress.
	PortName = "http"
)

// History kept by the backup CronJob, and retries of one run.
const (
	backupSuccessfulJobsHistory = 3
	backupFailedJobsHistory     = 3
	backupBackoffLimit          = 2
)

// syncService makes the Service that selects the app's pods.
func (k applicationKind) syncService(ctx context.Context, s *appPass) error {
	app := s.app
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	return k.apply(ctx, app, svc, "Service", func() { mutateService(svc, app) })
}

// syncIngress makes the Ingress when spec.host is set and allowed, and deletes it otherwise
// (s.hostRefused says why not): an Ingress for a host outside the allowed domains, or one
// another Application serves, would route someone else's name.
func (k applicationKind) syncIngress(ctx context.Context, s *appPass) error {
	app, host := s.app, s.hostRefused
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	if app.Spec.Host == "" {
		return k.deleteOwned(ctx, app, ing, "Ingress", "spec.host is not set")
	}
	if host != nil && host.reason == paasv1alpha1.ReasonHostConflict {
		return k.deleteOwned(ctx, app, ing, "Ingress", "another Application serves spec.host")
	}
	if host != nil {
		return k.deleteOwned(ctx, app, ing, "Ingress", "spec.host is not under an allowed domain")
	}
	return k.apply(ctx, app, ing, "Ingress", func() { mutateIngress(ing, app, k.IngressClass) })
}

// syncDeployment brings the Deployment in line with the spec and the links. While a link cannot
// be resolved it leaves an existing Deployment as it is (its pods keep running with what they
// have) and makes none: pods started without their credentials would only fail; so it does
// while the operator refuses the env. It keeps the Deployment as it stands in s.deploy.
func (k applicationKind) syncDeployment(ctx context.Context, s *appPass) (err error) {
	app := s.app
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	if !s.usable || s.envRefused != nil {
		s.deploy, err = getOwned(ctx, k.Client, app, deploy, "Deployment")
		return err
	}
	env := bucketEnv(s.links, ownKey)
	var id podIdentity
	if app.Keyless() {
		env, id = bucketEnv(s.links, noKey), podIdentity{serviceAccount: sharedAccessName(app.Name)}
		if len(s.links) > 0 {
			// One shared BucketAccess: every link's Access is it.
			env, id.audience = append(env, keylessEnv(app.Name, s.links[0])...), k.TokenAudience
		}
	}
	env = append(env, userEnv(app.Spec.Env)...)
	keys := accessKeys(linkAccesses(s.links)...)
	var oldKeys string
	err = k.apply(ctx, app, deploy, "Deployment", func() {
		oldKeys = deploy.Spec.Template.Annotations[AccessKeysAnnotation]
		mutateDeployment(deploy, app, env, keys, id)
	})
	if err != nil {
		return err
	}
	if oldKeys != "" && oldKeys != keys {
		k.Recorder.Eventf(app, deploy, corev1.EventTypeNormal, "CredentialsChanged", "Update",
			"The key of a linked BucketAccess changed; Deployment %s rolls its pods to pick it up", deploy.Name)
	}
	s.deploy = deploy
	return nil
}

// foreignError says that a child's name is taken by an object this Application does not own.
type foreignError struct{ kind, name string }

func (e *foreignError) Error() string {
	return fmt.Sprintf("%s %s exists and does not belong to this Application", e.kind, e.name)
}

// apply creates obj or updates it with mutate, and writes nothing when it already matches. It
// never takes over an object that belongs to something else.
func (k applicationKind) apply(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind string, mutate func()) error {
	op, err := controllerutil.CreateOrUpdate(ctx, k.Client, obj, func() error {
		if obj.GetResourceVersion() != "" && !metav1.IsControlledBy(obj, app) {
			return &foreignError{kind: kind, name: obj.GetName()}
		}
		mutate()
		return controllerutil.SetControllerReference(app, obj, k.Scheme())
	})
	if apierrors.IsAlreadyExists(err) {
		op, err = k.reclaim(ctx, app, obj, kind, mutate)
	}
	var foreign *foreignError
	switch {
	case errors.As(err, &foreign):
		return foreign
	case err != nil:
		return fmt.Errorf("writing %s %q: %w", kind, obj.GetName(), err)
	}
	log := logf.FromContext(ctx)
	switch op {
	case controllerutil.OperationResultCreated:
		log.Info("Created "+kind, "object", klog.KObj(obj))
		k.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Created", "Create", "Created %s %s", kind, obj.GetName())
	case controllerutil.OperationResultUpdated:
		log.Info("Updated "+kind, "object", klog.KObj(obj))
		k.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Updated", "Update",
			"Updated %s %s to match the Application", kind, obj.GetName())
	}
	return nil
}

// reclaim handles a child the cache does not hold but the API server does: the cache sees only
// objects labelled as the controller's children, so this is an object of someone else of the
// same name, or a child whose labels were edited away. The first is reported, the second made
// whole again.
func (k applicationKind) reclaim(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind string, mutate func()) (controllerutil.OperationResult, error) {
	live := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if err := k.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return controllerutil.OperationResultNone, err
	}
	if !metav1.IsControlledBy(live, app) {
		return controllerutil.OperationResultNone, &foreignError{kind: kind, name: obj.GetName()}
	}
	// mutate writes into obj: start it from the live object.
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(live).Elem())
	mutate()
	if err := k.Update(ctx, obj); err != nil {
		return controllerutil.OperationResultNone, err
	}
	return controllerutil.OperationResultUpdated, nil
}

// deleteOwned deletes obj when it exists and belongs to app; why says, for the event, why it
// is no longer wanted.
func (k applicationKind) deleteOwned(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind, why string) error {
	if err := k.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, app) {
		return nil
	}
	uid := obj.GetUID()
	if err := k.Client.Delete(ctx, obj, client.Preconditions{UID: &uid},
		client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).Info("Deleted "+kind, "object", klog.KObj(obj))
	k.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Deleted", "Delete", "Deleted %s %s: %s", kind, obj.GetName(), why)
	return nil
}

// getOwned reads obj and returns it when it belongs to app, nil when it does not exist.
func getOwned[T client.Object](ctx context.Context, c client.Reader, app *paasv1alpha1.Application, obj T, kind string) (T, error) {
	var none T
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return none, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, app) {
		return none, &foreignError{kind: kind, name: obj.GetName()}
	}
	return obj, nil
}

// apiMessage is the API server's own account of a refusal, without the wrapping of the call.
func apiMessage(err error) string {
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		return apiStatus.Status().Message
	}
	return err.Error()
}

func selectorLabels(app *paasv1alpha1.Application, component string) map[string]string {
	return map[string]string{LabelName: app.Name, LabelInstance: app.Name, LabelComponent: component}
}

// setLabels sets the controller's labels on m and leaves any others alone.
func setLabels(m *map[string]string, app *paasv1alpha1.Application, component string) {
	if *m == nil {
		*m = map[string]string{}
	}
	for k, v := range selectorLabels(app, component) {
		(*m)[k] = v
	}
	(*m)[LabelManagedBy] = ManagedBy
}

// podIdentity is who a keyless Application's pods are: the ServiceAccount they run under, and
// the audience of the token projected for them ("" for none: no link to reach). The zero value
// is the pods of an Application with keys, which run under the namespace's default
// ServiceAccount without its token.
type podIdentity struct {
	serviceAccount, audience string
}

// mutateDeployment makes d run the application with the given environment and identity, and
// the key ids of the BucketAccesses it reads (accessKeys) on the pod template.
func mutateDeployment(d *appsv1.Deployment, app *paasv1alpha1.Application, env []corev1.EnvVar, accessKeys string, id podIdentity) {
	setLabels(&d.Labels, app, ComponentApp)
	if d.Spec.Selector == nil {
		// The selector is immutable: set once, when the Deployment is made.
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: selectorLabels(app, ComponentApp)}
	}
	d.Spec.Replicas = ptr.To(ptr.Deref(app.Spec.Replicas, 1))

	tpl := &d.Spec.Template
	setLabels(&tpl.Labels, app, ComponentApp)
	setAccessKeys(tpl, accessKeys)
	c := container(tpl.Spec.Containers, AppContainer)
	setImage(&c, app.Spec.Image)
	c.Command = app.Spec.Command
	c.Args = app.Spec.Args
	c.Env = env
	c.Ports = []corev1.ContainerPort{{Name: PortName, ContainerPort: port(app), Protocol: corev1.ProtocolTCP}}
	c.Resources = *app.Spec.Resources.DeepCopy()
	restrictContainer(&c)
	setIdentity(&tpl.Spec, &c, id)
	tpl.Spec.Containers = []corev1.Container{c}
	restrictPod(&tpl.Spec, app)
}

// setIdentity runs the pod under id's ServiceAccount and, with an audience, mounts a token of
// it minted for that audience, read-only, where AWS_WEB_IDENTITY_TOKEN_FILE says: the only
// token the pod gets (restrictPod keeps the automounted one out). The kubelet renews it before
// tuning.TokenExpiration runs out, and the SDKs read the file again when their credentials
// expire.
func setIdentity(spec *corev1.PodSpec, c *corev1.Container, id podIdentity) {
	// serviceAccount is the deprecated alias the API server fills in from serviceAccountName.
	spec.ServiceAccountName, spec.DeprecatedServiceAccount = id.serviceAccount, id.serviceAccount
	spec.Volumes, c.VolumeMounts = nil, nil
	if id.audience == "" {
		return
	}
	spec.Volumes = []corev1.Volume{{Name: tokenVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: id.audience, ExpirationSeconds: ptr.To(int64(tuning.TokenExpiration.Seconds())), Path: tokenFile,
		}}},
		// As the API server defaults it, so that an unchanged Deployment is not written again.
		DefaultMode: ptr.To(corev1.ProjectedVolumeSourceDefaultMode),
	}}}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: tokenVolume, MountPath: tokenMountPath, ReadOnly: true}}
}

// mutateService makes s expose the application's port under the name "http".
func mutateService(s *corev1.Service, app *paasv1alpha1.Application) {
	setLabels(&s.Labels, app, ComponentApp)
	s.Spec.Type = corev1.ServiceTypeClusterIP
	s.Spec.Selector = selectorLabels(app, ComponentApp)
	s.Spec.Ports = []corev1.ServicePort{{
		Name:       PortName,
		Protocol:   corev1.ProtocolTCP,
		Port:       port(app),
		TargetPort: intstr.FromString(PortName),
	}}
}

// mutateIngress makes i route http://<host>/ to the Service, with the given ingress class; with
// none, the class is left to the cluster's default (and to whatever admission set).
func mutateIngress(i *networkingv1.Ingress, app *paasv1alpha1.Application, class string) {
	setLabels(&i.Labels, app, ComponentApp)
	if class != "" {
		i.Spec.IngressClassName = ptr.To(class)
	}
	i.Spec.Rules = []networkingv1.IngressRule{{
		Host: app.Spec.Host,
		IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{
				Path:     "/",
				PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: app.Name,
					Port: networkingv1.ServiceBackendPort{Name: PortName},
				}},
			}},
		}},
	}}
}

// mutateCronJob makes cj run the backup on its schedule, one run at a time. Each run's pod
// reads the Secrets when it starts; accessKeys only shows which keys a run will get.
func mutateCronJob(cj *batchv1.CronJob, app *paasv1alpha1.Application, env []corev1.EnvVar, accessKeys string) {
	backup := app.Spec.Backup
	setLabels(&cj.Labels, app, ComponentBackup)
	cj.Spec.Schedule = backup.Schedule
	cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
	cj.Spec.Suspend = ptr.To(backup.Suspend)
	cj.Spec.SuccessfulJobsHistoryLimit = ptr.To(int32(backupSuccessfulJobsHistory))
	cj.Spec.FailedJobsHistoryLimit = ptr.To(int32(backupFailedJobsHistory))

	job := &cj.Spec.JobTemplate
	c := container(job.Spec.Template.Spec.Containers, BackupContainer)
	setImage(&c, app.BackupImageOrDefault())
	c.Command = backup.Command
	c.Args = nil
	c.Env = env
	mutateJobRun(&job.ObjectMeta, &job.Spec, app, ComponentBackup, backupBackoffLimit, accessKeys, c)
}

// mutateJobRun makes a Job (or a CronJob's template of one) run c once as app's component,
// retried backoffLimit times, its pod restricted as every pod the operator writes. accessKeys
// names the keys it reads.
func mutateJobRun(meta *metav1.ObjectMeta, spec *batchv1.JobSpec, app *paasv1alpha1.Application, component string, backoffLimit int32,
	accessKeys string, c corev1.Container) {
	setLabels(&meta.Labels, app, component)
	spec.BackoffLimit = ptr.To(backoffLimit)
	tpl := &spec.Template
	setLabels(&tpl.Labels, app, component)
	setAccessKeys(tpl, accessKeys)
	tpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	restrictContainer(&c)
	tpl.Spec.Containers = []corev1.Container{c}
	restrictPod(&tpl.Spec, app)
}

// restrictPod makes a pod pass the "restricted" Pod Security Standard and keeps the namespace's
// service account token out of it: the operator writes pods for whoever may write
// Applications, and must not hand them more than a pod of their own could have.
func restrictPod(spec *corev1.PodSpec, app *paasv1alpha1.Application) {
	spec.AutomountServiceAccountToken = ptr.To(false)
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	sc := spec.SecurityContext
	sc.RunAsNonRoot = ptr.To(true)
	sc.RunAsUser = nil
	if app.Spec.RunAsUser != nil {
		sc.RunAsUser = ptr.To(*app.Spec.RunAsUser)
	}
	sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
}

// restrictContainer drops every capability and forbids privilege escalation, as the
// "restricted" Pod Security Standard asks of each container.
func restrictContainer(c *corev1.Container) {
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// container returns a copy of the container called name in cs, or a new one.
func container(cs []corev1.Container, name string) corev1.Container {
	for _, c := range cs {
		if c.Name == name {
			return *c.DeepCopy()
		}
	}
	return corev1.Container{Name: name}
}

// setImage sets the image. A new image drops the pull policy the server defaulted for the old
// one (Always for :latest, IfNotPresent otherwise) so that it is defaulted again.
func setImage(c *corev1.Container, image string) {
	if c.Image != image {
		c.ImagePullPolicy = ""
	}
	c.Image = image
}

func port(app *paasv1alpha1.Application) int32 {
	if app.Spec.Port == 0 {
		return 8080
	}
	return app.Spec.Port
}
