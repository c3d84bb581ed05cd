/** Every workflow the worker runs (this file is the worker's workflow bundle entry point). */
export { pingWorkflow } from './ping';
export { modelRequestWorkflow } from './model-request';
export { chatStreamWorkflow } from './chat-stream';
export { monthlyCreditGrantsWorkflow } from './monthly-credit-grants';
export { budgetWatcherWorkflow } from './budget-watcher';
export { budgetAlertDeliveryWorkflow } from './budget-alert-delivery';
export { imageStreamWorkflow } from './image-stream';
export { videoGenerationWorkflow } from './video-generation';
export { holdSweeperWorkflow } from './hold-sweeper';
export { autoTopUpWorkflow } from './auto-topup';
export { batchWorkflow, batchLineWorkflow } from './batch';
