/**
 * The Stripe operations the findings rules look at: those that move money or create billable objects. Kept beside
 * the rules (the inspector now classifies every SDK method in src/inspect/providers/stripe.ts; moving the rules onto
 * that table is the next step). `specific` resources are unmistakably Stripe even on an unknown receiver.
 */
export const STRIPE_OPERATIONS: Array<{ resource: string[]; methods: string[]; specific: boolean }> = [
  { resource: ['paymentIntents'], methods: ['create', 'confirm', 'capture', 'incrementAuthorization'], specific: true },
  { resource: ['checkout', 'sessions'], methods: ['create'], specific: true },
  { resource: ['paymentLinks'], methods: ['create'], specific: true },
  { resource: ['invoiceItems'], methods: ['create'], specific: true },
  { resource: ['subscriptionItems'], methods: ['create'], specific: true },
  { resource: ['subscriptionSchedules'], methods: ['create'], specific: true },
  { resource: ['creditNotes'], methods: ['create'], specific: true },
  { resource: ['topups'], methods: ['create'], specific: true },
  { resource: ['refunds'], methods: ['create'], specific: false },
  { resource: ['charges'], methods: ['create', 'capture'], specific: false },
  { resource: ['subscriptions'], methods: ['create', 'update', 'resume'], specific: false },
  { resource: ['invoices'], methods: ['create', 'pay', 'finalizeInvoice'], specific: false },
  { resource: ['payouts'], methods: ['create'], specific: false },
  { resource: ['transfers'], methods: ['create', 'createReversal'], specific: false },
  // Duplicate customers are the classic double-submit symptom and are billed against.
  { resource: ['customers'], methods: ['create'], specific: false },
];
