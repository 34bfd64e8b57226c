package paas

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/object-storage-manager/object-storage-manager/internal/engine/status"
)

// setCondition sets one of the conditions application_status.go computes, with the generation
// it describes.
func setCondition(conds *[]metav1.Condition, generation int64, typ string, c condition) {
	status.SetCondition(conds, generation, typ, c.Status, c.Reason, c.Message)
}
