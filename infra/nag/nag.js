// nag.js TEMPLATE: runs cdk-nag's AwsSolutions and Serverless packs over a
// synthesized CloudFormation template and prints one JSON object,
// {"violations": [...], "acknowledged": [...]}: each violation a rule
// and the template's logical ids it finds; each acknowledgement a rule, a
// logical id and its reason. The template is included with
// cloudformation-include, and the acknowledgements are the cdk_nag
// metadata the Go stack puts on its resources (infra/nag.go; cdk-nag v3
// reads none itself, so each becomes a Validations.acknowledge here).
// The Go test (infra/nag_test.go) decides what fails.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const cdk = require('aws-cdk-lib');
const { CfnInclude } = require('aws-cdk-lib/cloudformation-include');
const { AwsSolutionsChecks, ServerlessChecks } = require('cdk-nag');

const templateFile = process.argv[2];
if (!templateFile) {
  console.error('usage: node nag.js TEMPLATE.json');
  process.exit(2);
}
const template = JSON.parse(fs.readFileSync(templateFile, 'utf8'));
const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-nag-'));
const app = new cdk.App({ outdir, context: { '@aws-cdk/core:validationReportJson': true } });
// The template carries its own bootstrap version parameter and rule.
const stack = new cdk.Stack(app, 'Baton', { synthesizer: new cdk.DefaultStackSynthesizer({ generateBootstrapVersionRule: false }) });
const included = new CfnInclude(stack, 'Template', { templateFile });
const acknowledged = [];
for (const [id, res] of Object.entries(template.Resources || {})) {
  const rules = (((res.Metadata || {}).cdk_nag || {}).rules_to_suppress) || [];
  for (const r of rules) {
    // cdk-nag v3 names a finding PACK::RULE; v2's metadata says RULE.
    const pack = r.id.split('-')[0];
    cdk.Validations.of(included.getResource(id)).acknowledge({ id: `${pack}::${r.id}`, reason: r.reason });
    acknowledged.push({ rule: r.id, resource: id, reason: r.reason });
  }
}
cdk.Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
let failed = null;
try {
  app.synth();
} catch (e) {
  failed = e;
}
const reportFile = path.join(outdir, 'policy-validation-report.json');
if (!fs.existsSync(reportFile)) {
  console.error('no policy validation report', failed || '');
  process.exit(1);
}
const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
const violations = [];
for (const plugin of (report.pluginReports || [])) {
  for (const v of (plugin.violations || [])) {
    const resources = (v.violatingResources || v.violatingConstructs || []).map(r => r.resourceLogicalId || r.constructPath);
    violations.push({ plugin: plugin.summary && plugin.summary.pluginName, rule: v.ruleName, description: v.description, severity: v.severity, resources });
  }
}
fs.rmSync(outdir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ violations, acknowledged }, null, 1) + '\n');
