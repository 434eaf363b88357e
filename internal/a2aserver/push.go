package a2aserver

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func (r requestHandler) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, a2a.NewError(a2a.ErrPushNotificationNotSupported, "push notifications are not supported yet")
}

func (r requestHandler) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return nil, a2a.NewError(a2a.ErrPushNotificationNotSupported, "push notifications are not supported yet")
}

func (r requestHandler) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, a2a.NewError(a2a.ErrPushNotificationNotSupported, "push notifications are not supported yet")
}

func (r requestHandler) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	return a2a.NewError(a2a.ErrPushNotificationNotSupported, "push notifications are not supported yet")
}
