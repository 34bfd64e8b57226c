package operator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

func TestOwnAnnotationsTransformKeepsWhatThePassesRead(t *testing.T) {
	yes := true
	meta := metav1.ObjectMeta{
		Name: "photos", Namespace: "team-a",
		Labels:     map[string]string{"app": "web"},
		Finalizers: []string{storagev1alpha1.GroupVersion.Group + "/finalizer"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: paasv1alpha1.GroupVersion.String(), Kind: "Application",
			Name: "web", Controller: &yes}},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"storage.osm.dev/v1alpha1"}`,
			"meta.helm.sh/release-name":                        "web",
			storagev1alpha1.AbandonAnnotation:                  "true",
			storagev1alpha1.RotateKeyAnnotation:                "now",
			storagev1alpha1.ReleasedAnnotation:                 "uid",
			paasv1alpha1.RestoreAnnotation:                     "snap",
			"storage.osm.dev.example.com/lookalike":            "x",
		},
	}
	want := meta.DeepCopy()
	want.ManagedFields = nil
	want.Annotations = map[string]string{
		storagev1alpha1.AbandonAnnotation:   "true",
		storagev1alpha1.RotateKeyAnnotation: "now",
		storagev1alpha1.ReleasedAnnotation:  "uid",
		paasv1alpha1.RestoreAnnotation:      "snap",
	}
	for _, obj := range []metav1.Object{
		&storagev1alpha1.Bucket{ObjectMeta: *meta.DeepCopy()},
		&storagev1alpha1.Contract{ObjectMeta: *meta.DeepCopy()},
		&storagev1alpha1.BucketAccess{ObjectMeta: *meta.DeepCopy()},
		&paasv1alpha1.Application{ObjectMeta: *meta.DeepCopy()},
	} {
		out, err := OwnAnnotationsTransform(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(interface{ GetObjectMeta() metav1.Object }).GetObjectMeta().(*metav1.ObjectMeta)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%T entered the cache with other metadata (-want +got):\n%s", obj, diff)
		}
	}

	bare := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "b",
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}}}
	if _, err := OwnAnnotationsTransform(bare); err != nil {
		t.Fatal(err)
	}
	if bare.Annotations != nil {
		t.Errorf("annotations %v kept, want none (nil, not an empty map)", bare.Annotations)
	}
}

// Every annotation the operator's code reads must be one the cache keeps: this finds each
// read in the code (x.Annotations[k], x.GetAnnotations()[k], metav1.HasAnnotation(m, k)) and
// fails when its key is not of the operator's own groups, or is not a constant it can resolve.
// A new read of kubectl's, Helm's or anyone else's annotation must come with a change to
// OwnAnnotationsTransform (and to this test).
func TestTheCacheKeepsEveryAnnotationTheCodeReads(t *testing.T) {
	root := filepath.Join("..", "..")
	type read struct{ pos, key string }
	var reads []read
	consts := map[string]string{} // a string constant's name (last part) -> its value
	var files []*ast.File
	fset := token.NewFileSet()
	for _, dir := range []string{"api", "internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			files = append(files, f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range spec.Names {
				if i < len(spec.Values) {
					if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if v, err := strconv.Unquote(lit.Value); err == nil {
							consts[name.Name] = v
						}
					}
				}
			}
			return true
		})
	}
	isAnnotations := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			return x.Sel.Name == "Annotations"
		case *ast.CallExpr:
			sel, ok := x.Fun.(*ast.SelectorExpr)
			return ok && sel.Sel.Name == "GetAnnotations"
		}
		return false
	}
	keyOf := func(e ast.Expr) string {
		switch x := e.(type) {
		case *ast.BasicLit:
			v, _ := strconv.Unquote(x.Value)
			return v
		case *ast.Ident:
			return consts[x.Name]
		case *ast.SelectorExpr:
			return consts[x.Sel.Name]
		}
		return ""
	}
	for _, f := range files {
		written := map[ast.Expr]bool{} // x.Annotations[k] = v writes, it does not read
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				for _, lhs := range x.Lhs {
					written[lhs] = true
				}
			case *ast.IndexExpr:
				if isAnnotations(x.X) && !written[x] {
					reads = append(reads, read{fset.Position(x.Pos()).String(), keyOf(x.Index)})
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "HasAnnotation" && len(x.Args) == 2 {
					reads = append(reads, read{fset.Position(x.Pos()).String(), keyOf(x.Args[1])})
				}
			}
			return true
		})
	}
	if len(reads) < 5 {
		t.Fatalf("found only %d reads of annotations; the search no longer sees the code", len(reads))
	}
	for _, r := range reads {
		switch {
		case r.key == "":
			t.Errorf("%s: reads an annotation whose key this test cannot resolve to a constant", r.pos)
		case !OwnAnnotation(r.key):
			t.Errorf("%s: reads annotation %q, which OwnAnnotationsTransform strips from the cache", r.pos, r.key)
		}
	}
}
