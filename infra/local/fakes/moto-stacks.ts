// The Cloud Control fake's way into moto's own state: moto has no Cloud Control API, but its CloudFormation
// runs the same resource handlers for the types it implements (create_from_cloudformation_json …). One
// stack of one resource per Cloud Control resource: CreateStack, UpdateStack, DeleteStack over the query
// protocol, so what the fake creates is there for the service's own API (sqs GetQueueUrl, ssm GetParameter).
type Json = Record<string, unknown>;

/**
 * Types whose moto CloudFormation handlers create and delete a resource the service's own API knows, by the
 * physical id it knows (test/integration/awscc/moto.test.ts proves each; which updates moto applies is in
 * docs/awscc.md). Tried and left out with moto 5.2.1: KMS Key, RDS DBSubnetGroup, IoT Thing (500), Lambda Function
 * (an unknown role is refused), IAM ManagedPolicy (moto takes the document as an object, the kind sends a
 * string), Events Rule (its physical id is the name, not the Arn identifier), ECS Cluster, Route53
 * HostedZone, API Gateway RestApi (DeleteStack leaves them), and types moto makes no resource for.
 */
export const MOTO_BACKED: ReadonlySet<string> = new Set([
  "AWS::SQS::Queue",
  "AWS::SSM::Parameter",
  "AWS::S3::Bucket",
  "AWS::EC2::VPC",
  "AWS::EC2::InternetGateway",
  "AWS::EC2::SecurityGroup",
  "AWS::DynamoDB::Table",
  "AWS::Logs::LogGroup",
  "AWS::SNS::Topic",
  "AWS::IAM::Role",
  "AWS::IAM::User",
  "AWS::ECR::Repository",
  "AWS::Kinesis::Stream",
  "AWS::StepFunctions::StateMachine",
  "AWS::EFS::FileSystem",
  "AWS::Events::EventBus",
  "AWS::CloudWatch::Dashboard",
  "AWS::IAM::InstanceProfile",
  "AWS::EC2::Subnet",
  "AWS::SSM::Document",
]);

export class MotoStackError extends Error {
  override name = "MotoStackError";
}

async function call(endpoint: string, params: Record<string, string>): Promise<string> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      // moto reads the service and region from the signature's scope; it checks no signature.
      authorization:
        "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/cloudformation/aws4_request, SignedHeaders=host, Signature=0",
    },
    body: new URLSearchParams({ Version: "2010-05-15", ...params }).toString(),
  });
  const text = await res.text();
  if (!res.ok) {
    const message = /<Message>([\s\S]*?)<\/Message>/.exec(text)?.[1] ?? text.slice(0, 300);
    throw new MotoStackError(`moto CloudFormation ${params.Action}: ${message}`);
  }
  return text;
}

/**
 * What moto's handler reads where it differs from the registry schema: AWS::SSM::Parameter's `Tags` is a
 * string map in the schema (and in CloudFormation), but moto 5.2.1's handler iterates it as a list of
 * {Key, Value} and answers 500 to a map. Only the stack template sent to moto is changed; the fake's model
 * keeps the schema's shape.
 */
function motoProperties(type: string, properties: Json): Json {
  const tags = properties.Tags;
  if (type !== "AWS::SSM::Parameter" || !tags || typeof tags !== "object" || Array.isArray(tags))
    return properties;
  const list = Object.entries(tags as Record<string, string>).map(([Key, Value]) => ({ Key, Value }));
  return { ...properties, Tags: list };
}

const template = (type: string, properties: Json) =>
  JSON.stringify({ Resources: { R: { Type: type, Properties: motoProperties(type, properties) } } });

/** Creates the one-resource stack; returns the resource's physical id (what the type's handler names it). */
export async function createStack(endpoint: string, stack: string, type: string, properties: Json) {
  await call(endpoint, { Action: "CreateStack", StackName: stack, TemplateBody: template(type, properties) });
  const out = await call(endpoint, { Action: "DescribeStackResources", StackName: stack });
  const status = /<ResourceStatus>([^<]*)<\/ResourceStatus>/.exec(out)?.[1] ?? "";
  if (status !== "CREATE_COMPLETE")
    throw new MotoStackError(`moto CloudFormation: ${type} is ${status || "missing"}`);
  return /<PhysicalResourceId>([^<]*)<\/PhysicalResourceId>/.exec(out)?.[1] ?? "";
}

export async function updateStack(endpoint: string, stack: string, type: string, properties: Json) {
  await call(endpoint, { Action: "UpdateStack", StackName: stack, TemplateBody: template(type, properties) });
}

export async function deleteStack(endpoint: string, stack: string) {
  await call(endpoint, { Action: "DeleteStack", StackName: stack });
}

/** A JSON-protocol call to moto (the service from the credential scope, as moto routes it). */
async function json(endpoint: string, service: string, target: string, body: Json, version = "1.0") {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": `application/x-amz-json-${version}`,
      "x-amz-target": target,
      authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400 && res.status < 500) return undefined; // the service says it is not there
  if (!res.ok) throw new MotoStackError(`moto ${target}: ${text.slice(0, 300)}`);
  return JSON.parse(text || "{}") as Json;
}

const SQS_NUMBERS = [
  "DelaySeconds",
  "MaximumMessageSize",
  "MessageRetentionPeriod",
  "ReceiveMessageWaitTimeSeconds",
  "VisibilityTimeout",
];

/**
 * Reads through the service's own API, for the moto-backed types whose state moto's CloudFormation cannot
 * give back: the properties the service reports, laid over the recorded model (undefined: gone). A change
 * made in moto behind driftless's back is then drift, as in AWS.
 */
export const MOTO_READERS: Record<string, (endpoint: string, model: Json) => Promise<Json | undefined>> = {
  async "AWS::SQS::Queue"(endpoint, model) {
    const url = await json(endpoint, "sqs", "AmazonSQS.GetQueueUrl", { QueueName: model.QueueName });
    if (!url) return undefined;
    const out = await json(endpoint, "sqs", "AmazonSQS.GetQueueAttributes", {
      QueueUrl: url.QueueUrl,
      AttributeNames: ["All"],
    });
    const attrs = (out?.Attributes ?? {}) as Record<string, string>;
    return Object.fromEntries(
      SQS_NUMBERS.filter((k) => attrs[k] !== undefined).map((k) => [k, Number(attrs[k])]),
    );
  },
  async "AWS::SSM::Parameter"(endpoint, model) {
    const out = await json(endpoint, "ssm", "AmazonSSM.GetParameter", { Name: model.Name }, "1.1");
    const p = out?.Parameter as { Value?: string } | undefined;
    return p ? { Value: p.Value } : undefined;
  },
};
