import { toast } from 'react-toastify';
import { Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { useDownloadBatch } from '../api';

/** "Download all": the given files as one ZIP. A refusal (the server's message names the ids
 * it refused) stays beside the button until the next try. */
export function DownloadAllButton({ fileIds, label = 'Download all', className = 'btn-primary' }: {
  fileIds: string[]; label?: string; className?: string;
}) {
  const batch = useDownloadBatch();
  const onClick = () => {
    batch.mutate(fileIds, { onSuccess: () => toast.success('Download started') });
  };
  return (
    <div className="flex flex-col items-start gap-2 sm:items-end">
      <button type="button" className={className} onClick={onClick} disabled={batch.isPending || fileIds.length === 0}
        aria-describedby={batch.isError ? 'download-all-error' : undefined} data-testid="download-all">
        {batch.isPending && <Spinner label="Downloading" className="h-4 w-4" />}
        {label}{fileIds.length > 0 && ` (${fileIds.length})`}
      </button>
      {batch.isError && (
        <p id="download-all-error" role="alert" className="max-w-md text-sm text-red-700" data-testid="download-all-error">
          {messageOf(batch.error, 'Download failed')}
        </p>
      )}
    </div>
  );
}
