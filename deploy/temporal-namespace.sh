#!/bin/sh
# Creates the namespace the service uses, once the Temporal server answers (the `temporal-namespace` job).
set -eu
until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do sleep 2; done
temporal operator namespace describe -n "$TEMPORAL_NAMESPACE" --address "$TEMPORAL_ADDRESS" \
  || temporal operator namespace create -n "$TEMPORAL_NAMESPACE" --retention 30d --address "$TEMPORAL_ADDRESS"
# The service's search attributes (docs/webhooks.md, docs/operations.md); an existing one is left as it is.
for a in WebhookAccount WebhookShop WebhookEndpointId WebhookEventType WebhookDeliveryStatus OpsAccount OpsShop OpsKind OpsKey OpsStatus; do
  temporal operator search-attribute list -n "$TEMPORAL_NAMESPACE" --address "$TEMPORAL_ADDRESS" | grep -qw "$a" \
    || temporal operator search-attribute create -n "$TEMPORAL_NAMESPACE" --address "$TEMPORAL_ADDRESS" --name "$a" --type Keyword
done
