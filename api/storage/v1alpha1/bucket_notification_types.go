package v1alpha1

// NotificationEvent is an S3 event type a notification is sent for.
// +kubebuilder:validation:Enum="s3:ObjectCreated:*";"s3:ObjectCreated:Put";"s3:ObjectCreated:Post";"s3:ObjectCreated:Copy";"s3:ObjectCreated:CompleteMultipartUpload";"s3:ObjectRemoved:*";"s3:ObjectRemoved:Delete";"s3:ObjectRemoved:DeleteMarkerCreated"
type NotificationEvent string

// BucketNotification sends an event to an HTTP endpoint for each object created or removed in
// the bucket whose key matches its filter. The operator asks the Contract's provider for a
// topic that pushes to the endpoint, and points the bucket's notification at it.
type BucketNotification struct {
	// name tells the notification apart from the Bucket's others; it names the notification at
	// the server and, with the Bucket's uid, its topic at the provider.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="lowercase letters, digits and '-', starting and ending with a letter or digit"
	Name string `json:"name"`

	// endpoint is the http or https URL each event is POSTed to, as a JSON record in the form
	// S3 sends events in.
	// +required
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('http://') || self.startsWith('https://'))",message="must be an http:// or https:// URL: http://receiver.example:8080/events"
	Endpoint string `json:"endpoint"`

	// events are the S3 event types sent: s3:ObjectCreated:* (every way an object is made),
	// s3:ObjectRemoved:* (every deletion), or one of their kinds (s3:ObjectCreated:Put, ...).
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Events []NotificationEvent `json:"events"`

	// filter sends events only for keys with a prefix, a suffix, or both; absent, for every key.
	// +optional
	Filter *NotificationFilter `json:"filter,omitempty"`
}

// NotificationFilter selects objects by the start and end of their key.
// +kubebuilder:validation:XValidation:rule="has(self.prefix) || has(self.suffix)",message="a filter needs a prefix, a suffix, or both; leave filter out for every key"
type NotificationFilter struct {
	// prefix the key starts with: images/.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix,omitempty"`

	// suffix the key ends with: .jpg.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Suffix string `json:"suffix,omitempty"`
}

// ObservedNotification is a bucket's notification as the S3 endpoint reports it.
type ObservedNotification struct {
	// name is the notification's id at the server.
	// +required
	Name string `json:"name"`

	// topicArn is the topic it publishes to.
	// +optional
	TopicARN string `json:"topicArn,omitempty"`

	// events are the event types it is sent for.
	// +optional
	// +listType=atomic
	Events []string `json:"events,omitempty"`

	// filter is its key filter.
	// +optional
	Filter *NotificationFilter `json:"filter,omitempty"`
}

// NotificationTopic is a topic the operator asked the Contract's provider for.
type NotificationTopic struct {
	// name is the topic's name within the contract: the Bucket's uid and the notification's
	// name.
	// +required
	Name string `json:"name"`

	// endpoint is the URL the topic pushes to, as last asked for.
	// +required
	Endpoint string `json:"endpoint"`

	// arn is the topic's ARN as the provider answered it; absent until it has.
	// +optional
	ARN string `json:"arn,omitempty"`
}
