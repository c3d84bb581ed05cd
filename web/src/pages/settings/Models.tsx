import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { Empty, ErrorNote, Loading, Section, Select, Table } from '../../ui';

/** The catalog: every model with its modality, prices and allowed parameters, and whether this workspace can use it. */
export function Models() {
  const models = useQuery({ queryKey: ['models'], queryFn: api.models });
  const [modality, setModality] = useState('');
  const [search, setSearch] = useState('');
  const all = models.data?.data ?? [];
  const modalities = [...new Set(all.map((m) => m.modality))].sort();
  const shown = all.filter((m) => (!modality || m.modality === modality) && (!search || m.id.includes(search.toLowerCase())));
  return (
    <Section title="Model catalog">
      <div className="inline">
        <Select label="Modality" value={modality} onChange={(e) => setModality(e.target.value)} options={[{ value: '', label: 'All' }, ...modalities.map((m) => ({ value: m, label: m }))]} />
        <div className="field"><label htmlFor="model-search">Search</label><input id="model-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} /></div>
      </div>
      {models.isPending && <Loading what="models" />}
      <ErrorNote error={models.error} />
      {models.data && shown.length === 0 && <Empty>No model matches.</Empty>}
      {shown.length > 0 && (
        <Table caption={`${shown.length} models`} head={['Model', 'Provider', 'Modality', 'Pricing (credits)', 'Allowed parameters']}>
          {shown.map((m) => (
            <tr key={m.id} className={m.available ? undefined : 'unavailable'}>
              <td><code>{m.id}</code>{!m.available && <span className="badge expired" title={m.unavailable_reason}>{m.needs_provider_key ? 'needs a provider key' : 'not configured'}</span>}</td>
              <td>{m.provider}</td>
              <td>{m.modality}</td>
              <td><Pairs value={m.pricing} /></td>
              <td><details><summary>{Object.keys(m.allowedParams).length} parameters</summary><Pairs value={m.allowedParams} /></details></td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}

function Pairs({ value }: { value: Record<string, unknown> }) {
  return (
    <dl className="pairs">
      {Object.entries(value).filter(([k]) => k !== 'unit').map(([k, v]) => (
        <div key={k}><dt>{k}</dt><dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd></div>
      ))}
    </dl>
  );
}
